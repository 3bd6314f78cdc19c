//! Plain `cargo test` confirms, in-process, that each Stage 5 variant still fails its declared
//! checks: the contract and model suites, the crash scenarios (a panic at the crash point stands
//! for the abort) and the PostgreSQL connection checks. Without RETRYKEY_PG_URL the PostgreSQL
//! check is ignored, and `cargo test` counts it so (see `build.rs`); under CI it must run.

use std::collections::BTreeSet;

use retrykey::Ledger;
use retrykey_durable::LedgerOptions;
use retrykey_durable_checks::admin::url;
use retrykey_durable_checks::crash::server::{Backend, open_correct};
use retrykey_durable_checks::{LedgerUnderTest, failing_checks};

/// Compares the failures with the declaration: the suites this run covers, may-fail ignored.
fn assert_fails_as_declared(variant: &str, suites: &[&str], failing: BTreeSet<String>) {
    retrykey_tests::assert_fails_as_declared(variant, 5, suites, &failing);
}

const SQLITE_SUITES: &[&str] = &["contract::", "model::", "crash::"];

fn separate_transactions(
    backend: &Backend,
    options: LedgerOptions,
) -> Result<Box<dyn Ledger>, retrykey_durable::Error> {
    match backend {
        Backend::Sqlite(path) => Ok(Box::new(separate_transactions::SqliteLedger::open(
            path, options,
        )?)),
        Backend::Pg { .. } => Err(retrykey_durable::Error::Config("SQLite only".into())),
    }
}

fn record_before_effect(
    backend: &Backend,
    options: LedgerOptions,
) -> Result<Box<dyn Ledger>, retrykey_durable::Error> {
    match backend {
        Backend::Sqlite(path) => Ok(Box::new(record_before_effect::SqliteLedger::open(
            path, options,
        )?)),
        Backend::Pg { .. } => Err(retrykey_durable::Error::Config("SQLite only".into())),
    }
}

// The correct SQLite ledger fails nothing: the baseline the variants are compared with.
#[test]
fn correct_sqlite_ledger_fails_nothing() {
    let failing = failing_checks(LedgerUnderTest::Sqlite {
        make: &|limits| retrykey_durable::SqliteLedger::ephemeral(limits).expect("ledger"),
        open: open_correct,
    });
    assert_eq!(failing, BTreeSet::new());
}

// separate-transactions fails exactly its declared checks.
#[test]
fn separate_transactions_fails_as_declared() {
    let failing = failing_checks(LedgerUnderTest::Sqlite {
        make: &|limits| separate_transactions::SqliteLedger::ephemeral(limits).expect("ledger"),
        open: separate_transactions,
    });
    assert_fails_as_declared("separate-transactions", SQLITE_SUITES, failing);
}

// record-before-effect fails exactly its declared checks.
#[test]
fn record_before_effect_fails_as_declared() {
    let failing = failing_checks(LedgerUnderTest::Sqlite {
        make: &|limits| record_before_effect::SqliteLedger::ephemeral(limits).expect("ledger"),
        open: record_before_effect,
    });
    assert_fails_as_declared("record-before-effect", SQLITE_SUITES, failing);
}

// check-then-insert fails exactly its declared checks (PostgreSQL; ignored without the URL).
retrykey_durable_checks::postgres_test! {
    fn check_then_insert_fails_as_declared() {
        let url = url();
        let failing = failing_checks(LedgerUnderTest::Postgres {
            url: &url,
            make: &|limits| check_then_insert::PgLedger::ephemeral(&url, limits).expect("ledger"),
            open: &|url: &str, options: LedgerOptions| check_then_insert::PgLedger::open(url, options),
        });
        assert_fails_as_declared(
            "check-then-insert",
            &["contract::", "model::", "connections::"],
            failing,
        );
    }
}
