//! Schema versions on PostgreSQL: a ledger written in the previous layout migrates and replays
//! its operations; a layout newer than this build, or an unreadable old record, is refused with
//! the data left as it was. Skipped, with a message, when RETRYKEY_PG_URL is not set.

use crate::common::{key, migrated_ledger_replays, request, v1_operations};
use retrykey::Ledger;
use retrykey_durable::pg::schema;
use retrykey_durable::{LedgerOptions, PgLedger, SCHEMA_VERSION};
use retrykey_durable_checks::admin::{Admin, url};
use retrykey_durable_checks::crash::server::pg_options;
use retrykey_testkit::FreshSchema;

/// A fresh schema, dropped at the end of the test, and the URL of its database.
struct Place {
    schema: FreshSchema,
    url: String,
}

impl Place {
    fn new(url: &str) -> Self {
        Self {
            schema: FreshSchema::new(url),
            url: url.to_owned(),
        }
    }

    fn options(&self) -> LedgerOptions {
        pg_options(self.schema.name(), LedgerOptions::default())
    }

    fn admin(&self) -> Admin {
        Admin::connect(&self.url, self.schema.name()).expect("admin")
    }

    fn number(&self, sql: &str) -> i64 {
        self.admin().number(sql, &[]).expect(sql)
    }
}

// Requirement: a version-1 ledger is migrated on open, and every old receipt replays unchanged
// with no new effect.
retrykey_durable_checks::postgres_test! {
    fn version_1_ledger_migrates_and_replays() {
        let place = Place::new(&url());
        schema::write_v1(&place.url, place.schema.name(), &v1_operations())
            .expect("write a version-1 ledger");
        assert_eq!(place.number("SELECT version::bigint FROM retrykey_meta"), 1);

        let ledger = PgLedger::open(&place.url, place.options()).expect("open migrates");
        assert_eq!(
            place.number("SELECT version::bigint FROM retrykey_meta"),
            SCHEMA_VERSION
        );
        assert_eq!(
            place.number("SELECT count(*) FROM operations WHERE schema_version = 2"),
            2
        );
        migrated_ledger_replays(&ledger);
    }
}

// Requirement: a layout newer than this build is refused and left exactly as it was.
retrykey_durable_checks::postgres_test! {
    fn newer_layout_is_refused_unchanged() {
        let place = Place::new(&url());
        let ledger = PgLedger::open(&place.url, place.options()).expect("create");
        ledger.apply(&key("op-1"), &request(7)).expect("apply");
        drop(ledger);
        place
            .admin()
            .batch(&format!(
                "UPDATE retrykey_meta SET version = {}",
                SCHEMA_VERSION + 1
            ))
            .expect("pretend a newer release wrote it");
        let before = place.number("SELECT (sum(total) + sum(operations) * 1000)::bigint FROM ledger");
        let refused = PgLedger::open(
            &place.url,
            LedgerOptions {
                scope: "another".to_owned(),
                ..place.options()
            },
        )
        .map(|_| ());
        assert!(
            matches!(refused, Err(retrykey_durable::Error::SchemaTooNew { found, supported })
                if found == SCHEMA_VERSION + 1 && supported == SCHEMA_VERSION),
            "got {refused:?}"
        );
        assert_eq!(
            place.number("SELECT version::bigint FROM retrykey_meta"),
            SCHEMA_VERSION + 1
        );
        assert_eq!(
            place.number("SELECT count(*) FROM ledger"),
            1,
            "no ledger row for the refused scope"
        );
        assert_eq!(
            place.number("SELECT (sum(total) + sum(operations) * 1000)::bigint FROM ledger"),
            before
        );
        assert_eq!(place.number("SELECT count(*) FROM operations"), 1);
    }
}

// Requirement: an unreadable old record stops the migration and changes nothing.
retrykey_durable_checks::postgres_test! {
    fn unreadable_old_record_stops_the_migration() {
        let place = Place::new(&url());
        schema::write_v1(
            &place.url,
            place.schema.name(),
            &[(key("op-1"), request(7))],
        )
        .expect("write");
        place
            .admin()
            .batch("UPDATE operations SET receipt = 'seven'")
            .expect("damage the receipt");
        let refused = PgLedger::open(&place.url, place.options()).map(|_| ());
        assert!(
            matches!(&refused, Err(retrykey_durable::Error::Migration { key, .. }) if key == "op-1"),
            "got {refused:?}"
        );
        assert_eq!(
            place.number("SELECT version::bigint FROM retrykey_meta"),
            1,
            "the migration rolled back whole"
        );
        assert_eq!(place.number("SELECT total FROM ledger WHERE id = 1"), 7);
        assert_eq!(place.number("SELECT count(*) FROM operations"), 1);
    }
}
