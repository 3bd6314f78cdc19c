//! Schema versions: a ledger written in the previous layout migrates and replays its
//! operations; a layout newer than this build is refused, unchanged.

use std::path::PathBuf;

use crate::common::{key, migrated_ledger_replays, request, v1_operations};
use retrykey_durable::sqlite::schema;
use retrykey_durable::{LedgerOptions, SCHEMA_VERSION, SqliteLedger};
use rusqlite::Connection;

struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str) -> Self {
        Self(std::env::temp_dir().join(format!("retrykey-{name}-{}.sqlite", std::process::id())))
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        retrykey_durable::sqlite::remove_files(&self.0);
    }
}

fn stored_version(file: &TempFile) -> i64 {
    schema::version(&Connection::open(&file.0).expect("open"))
        .expect("version")
        .expect("a recorded version")
}

// Requirement: a version-1 ledger is migrated on open, and every old receipt replays unchanged.
#[test]
fn version_1_ledger_migrates_and_replays() {
    let file = TempFile::new("v1-migrate");
    schema::write_v1(&file.0, &v1_operations()).expect("write a version-1 ledger");
    assert_eq!(stored_version(&file), 1);

    let ledger = SqliteLedger::open(&file.0, LedgerOptions::default()).expect("open migrates");
    assert_eq!(stored_version(&file), SCHEMA_VERSION);
    migrated_ledger_replays(&ledger);
}

// Requirement: a layout newer than this build is refused and left exactly as it was.
#[test]
fn newer_layout_is_refused_unchanged() {
    let file = TempFile::new("v-future");
    drop(SqliteLedger::open(&file.0, LedgerOptions::default()).expect("create"));
    let conn = Connection::open(&file.0).expect("open");
    conn.execute(
        "UPDATE retrykey_meta SET version = ?1",
        [SCHEMA_VERSION + 1],
    )
    .expect("pretend a newer release wrote it");
    drop(conn);
    let refused = SqliteLedger::open(&file.0, LedgerOptions::default()).map(|_| ());
    assert!(
        matches!(refused, Err(retrykey_durable::Error::SchemaTooNew { found, supported })
            if found == SCHEMA_VERSION + 1 && supported == SCHEMA_VERSION),
        "got {refused:?}"
    );
    assert_eq!(stored_version(&file), SCHEMA_VERSION + 1);
}

// Requirement: an unreadable old record stops the migration and changes nothing.
#[test]
fn unreadable_old_record_stops_the_migration() {
    let file = TempFile::new("v1-broken");
    schema::write_v1(&file.0, &[(key("op-1"), request(7))]).expect("write");
    let conn = Connection::open(&file.0).expect("open");
    conn.execute("UPDATE operations SET receipt = 'seven'", [])
        .expect("damage the receipt");
    drop(conn);
    let refused = SqliteLedger::open(&file.0, LedgerOptions::default()).map(|_| ());
    assert!(
        matches!(&refused, Err(retrykey_durable::Error::Migration { key, .. }) if key == "op-1"),
        "got {refused:?}"
    );
    assert_eq!(stored_version(&file), 1, "the migration rolled back whole");
}
