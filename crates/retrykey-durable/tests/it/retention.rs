//! Retention: records replay until swept; a swept key is a new operation; a full ledger rejects
//! rather than evicts. On SQLite always, on PostgreSQL when RETRYKEY_PG_URL is set.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use retrykey::{Error, Key, Ledger, Limits, Receipt, Request};
use retrykey_durable::options::DEFAULT_RETENTION;
use retrykey_durable::retention::{Sweep, Sweeper};
use retrykey_durable::{LedgerOptions, PgLedger, SqliteLedger};
use retrykey_durable_checks::admin::url;

pub(crate) fn key(text: &str) -> Key {
    Key::new(text).expect("valid key")
}

pub(crate) fn request(units: u64) -> Request {
    Request::new("convert-document", units).expect("valid request")
}

pub(crate) fn receipt(operation: u64, total: u64) -> Receipt {
    Receipt {
        operation,
        total,
        replayed: false,
    }
}

/// A moment after every record created so far has expired.
fn past_the_window() -> SystemTime {
    SystemTime::now() + DEFAULT_RETENTION + Duration::from_secs(2)
}

fn replays_until_swept(ledger: &(impl Ledger + Sweep)) {
    assert_eq!(ledger.apply(&key("a"), &request(5)), Ok(receipt(1, 5)));
    assert_eq!(
        ledger.sweep(SystemTime::now()),
        Ok(0),
        "nothing is old enough"
    );
    assert_eq!(
        ledger.apply(&key("a"), &request(5)),
        Ok(receipt(1, 5).replay())
    );
    assert_eq!((ledger.total(), ledger.records()), (Ok(5), Ok(1)));
}

fn swept_key_is_a_new_operation(ledger: &(impl Ledger + Sweep)) {
    assert_eq!(ledger.apply(&key("a"), &request(5)), Ok(receipt(1, 5)));
    assert_eq!(ledger.sweep(past_the_window()), Ok(1));
    assert_eq!(
        (ledger.total(), ledger.records()),
        (Ok(5), Ok(0)),
        "the effect stays"
    );
    assert_eq!(ledger.receipt(&key("a")), Ok(None), "the record is gone");
    // The documented contract: once forgotten, the key applies again, with a new number.
    assert_eq!(ledger.apply(&key("a"), &request(5)), Ok(receipt(2, 10)));
    assert_eq!((ledger.total(), ledger.records()), (Ok(10), Ok(1)));
}

fn full_ledger_rejects_rather_than_evicts(ledger: &(impl Ledger + Sweep)) {
    assert_eq!(ledger.apply(&key("a"), &request(1)), Ok(receipt(1, 1)));
    assert_eq!(ledger.apply(&key("b"), &request(2)), Ok(receipt(2, 3)));
    let full = Err(Error::Capacity { max_records: 2 });
    assert_eq!(ledger.apply(&key("c"), &request(4)), full);
    assert_eq!(
        ledger.sweep(SystemTime::now()),
        Ok(0),
        "live records are never evicted"
    );
    assert_eq!(ledger.apply(&key("c"), &request(4)), full);
    assert_eq!(ledger.receipt(&key("a")), Ok(Some(receipt(1, 1))));
    assert_eq!(ledger.receipt(&key("b")), Ok(Some(receipt(2, 3))));
    assert_eq!((ledger.total(), ledger.records()), (Ok(3), Ok(2)));
    // Only expired records make room.
    assert_eq!(ledger.sweep(past_the_window()), Ok(2));
    assert_eq!(ledger.apply(&key("c"), &request(4)), Ok(receipt(3, 7)));
}

fn two_records() -> Limits {
    Limits {
        max_records: 2,
        ..Limits::default()
    }
}

fn sqlite(limits: Limits) -> SqliteLedger {
    SqliteLedger::ephemeral(limits).expect("SQLite ledger")
}

fn postgres(limits: Limits) -> PgLedger {
    PgLedger::ephemeral(&url(), limits).expect("PostgreSQL ledger")
}

// Requirement: on SQLite a record replays until the sweeper deletes it.
#[test]
fn sqlite_replays_until_swept() {
    replays_until_swept(&sqlite(Limits::default()));
}

// Requirement: on SQLite a swept key applies as a new operation with a new number.
#[test]
fn sqlite_swept_key_is_a_new_operation() {
    swept_key_is_a_new_operation(&sqlite(Limits::default()));
}

// Requirement: on SQLite a full ledger rejects new operations and keeps every live record.
#[test]
fn sqlite_full_ledger_rejects_rather_than_evicts() {
    full_ledger_rejects_rather_than_evicts(&sqlite(two_records()));
}

// Requirement: on PostgreSQL a record replays until the sweeper deletes it.
retrykey_durable_checks::postgres_test! {
    fn postgres_replays_until_swept() {
        replays_until_swept(&postgres(Limits::default()));
    }
}

// Requirement: on PostgreSQL a swept key applies as a new operation with a new number.
retrykey_durable_checks::postgres_test! {
    fn postgres_swept_key_is_a_new_operation() {
        swept_key_is_a_new_operation(&postgres(Limits::default()));
    }
}

// Requirement: on PostgreSQL a full ledger rejects new operations and keeps every live record.
retrykey_durable_checks::postgres_test! {
    fn postgres_full_ledger_rejects_rather_than_evicts() {
        full_ledger_rejects_rather_than_evicts(&postgres(two_records()));
    }
}

// A window longer than the clock can count keeps every record; it never wraps into "expired".
#[test]
fn sqlite_endless_window_keeps_everything() {
    let path = retrykey_durable::sqlite::ephemeral_path();
    let options = LedgerOptions {
        retention: Duration::MAX,
        ..LedgerOptions::default()
    };
    let ledger = SqliteLedger::open(&path, options).expect("open");
    assert_eq!(ledger.apply(&key("a"), &request(5)), Ok(receipt(1, 5)));
    assert_eq!(ledger.sweep(past_the_window()), Ok(0));
    assert_eq!(ledger.receipt(&key("a")), Ok(Some(receipt(1, 5))));
    assert_eq!((ledger.total(), ledger.records()), (Ok(5), Ok(1)));
    drop(ledger);
    retrykey_durable::sqlite::remove_files(&path);
}

// Requirement: the background sweeper deletes records once their window has passed.
#[test]
fn sweeper_thread_deletes_expired_records() {
    let dir = std::env::temp_dir().join(format!("retrykey-sweeper-{}.sqlite", std::process::id()));
    let options = LedgerOptions {
        retention: Duration::ZERO,
        ..LedgerOptions::default()
    };
    let ledger = Arc::new(SqliteLedger::open(&dir, options).expect("open"));
    assert_eq!(ledger.apply(&key("a"), &request(5)), Ok(receipt(1, 5)));
    let sweeper = Sweeper::start(Arc::clone(&ledger), Duration::from_millis(50));
    // Creation times have one-second resolution: wait (bounded) for the next second's sweep.
    let deadline = Instant::now() + Duration::from_secs(60);
    while ledger.records() != Ok(0) {
        assert!(
            Instant::now() < deadline,
            "the sweeper never deleted the record"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    sweeper.stop();
    assert_eq!(
        ledger.total(),
        Ok(5),
        "sweeping forgets records, never effects"
    );
    drop(ledger);
    retrykey_durable::sqlite::remove_files(&dir);
}

// A zero retention window forgets a key as soon as its record is a second old, and the same
// request then applies a second time: no window shorter than a retry's delay is safe.
#[test]
fn zero_window_forgets_at_once() {
    let path = retrykey_durable::sqlite::ephemeral_path();
    let options = LedgerOptions {
        retention: Duration::ZERO,
        ..LedgerOptions::default()
    };
    let ledger = SqliteLedger::open(&path, options).expect("open");
    assert_eq!(ledger.apply(&key("a"), &request(5)), Ok(receipt(1, 5)));
    // Creation times are whole seconds, and the sweep deletes the records created before the
    // cutoff: a second from now, the record is old enough.
    let later = SystemTime::now() + Duration::from_secs(1);
    assert_eq!(ledger.sweep(later), Ok(1));
    // The retry is a new operation: a second effect for one request.
    assert_eq!(ledger.apply(&key("a"), &request(5)), Ok(receipt(2, 10)));
    assert_eq!((ledger.total(), ledger.records()), (Ok(10), Ok(1)));
    drop(ledger);
    retrykey_durable::sqlite::remove_files(&path);
}
