//! Checks with real PostgreSQL connections: concurrent writers, conflicts, rollbacks, and
//! connections lost around COMMIT. [`connections_suite!`](crate::connections_suite) turns them
//! into `#[test]`s named `connections::<check>`.
//!
//! Each check takes `open`, which opens a ledger on the database at a URL with the given
//! options, so the same checks run on the correct
//! [`PgLedger`](retrykey_durable::PgLedger) and on a variant. Each uses a fresh schema.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use retrykey::{Error, Key, Ledger, Receipt, Request};

use retrykey_durable::LedgerOptions;
use retrykey_testkit::FreshSchema;
use retrykey_testkit::proxy::{CommitCut, FaultProxy};

use crate::admin::Admin;
use crate::crash::{Hooks, Point};

/// Opens a ledger on the database at a URL.
pub type Open<L> = dyn Fn(&str, LedgerOptions) -> Result<L, retrykey_durable::Error>;

const UNITS: u64 = 5;

fn key() -> Key {
    Key::new("order-42").expect("valid key")
}

fn request(units: u64) -> Request {
    Request::new("convert-document", units).expect("valid request")
}

fn options(schema: &str, name: &str, hooks: Hooks) -> LedgerOptions {
    LedgerOptions {
        pg_schema: schema.to_owned(),
        pg_connections: 1,
        pg_application_name: format!("{schema}_{name}"),
        hooks,
        ..LedgerOptions::default()
    }
}

fn state<L: Ledger>(ledger: &L) -> (u64, usize, Option<Receipt>) {
    (
        ledger.total().expect("total"),
        ledger.records().expect("records"),
        ledger.receipt(&key()).expect("receipt"),
    )
}

fn fresh_receipt() -> Receipt {
    Receipt {
        operation: 1,
        total: UNITS,
        replayed: false,
    }
}

/// Waits (at most a minute) until `admin` sees `count` connections named `names` waiting on
/// a lock.
fn wait_for_lock_waiters(admin: &Admin, names: &[String], count: i64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let waiting = admin
            .number(
                "SELECT count(*) FROM pg_stat_activity
                 WHERE application_name = ANY($1) AND wait_event_type = 'Lock'",
                &[&names],
            )
            .expect("pg_stat_activity");
        if waiting == count {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "only {waiting} of {count} connections reached the ledger row lock"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Two connections present the same key at the same moment: one effect, one record, and the
/// loser replays the winner's receipt.
pub fn two_connections_one_effect<L: Ledger>(url: &str, open: &Open<L>) {
    let place = FreshSchema::new(url);
    let schema = place.name();
    let a = open(url, options(schema, "a", Hooks::none())).expect("open a");
    let b = open(url, options(schema, "b", Hooks::none())).expect("open b");
    let names = vec![format!("{schema}_a"), format!("{schema}_b")];
    // Hold the ledger row so that both transactions pass their lookup and then queue up.
    let locker = Admin::connect(url, schema).expect("admin");
    let watcher = Admin::connect(url, schema).expect("admin");
    locker
        .batch("BEGIN; SELECT 1 FROM ledger FOR UPDATE")
        .expect("lock");
    let (first, second) = std::thread::scope(|scope| {
        let first = scope.spawn(|| a.apply(&key(), &request(UNITS)));
        let second = scope.spawn(|| b.apply(&key(), &request(UNITS)));
        wait_for_lock_waiters(&watcher, &names, 2);
        locker.batch("COMMIT").expect("unlock");
        (first.join().expect("a"), second.join().expect("b"))
    });
    let mut receipts = [first.expect("a applies"), second.expect("b applies")];
    receipts.sort_by_key(|receipt| receipt.replayed);
    assert_eq!(
        receipts,
        [fresh_receipt(), fresh_receipt().replay()],
        "one connection applies, the other replays its receipt"
    );
    assert_eq!(
        state(&a),
        (UNITS, 1, Some(fresh_receipt())),
        "one effect, one record"
    );
}

/// The same key with a changed request from another connection is a conflict, and nothing is
/// written for it.
pub fn changed_input_conflicts<L: Ledger>(url: &str, open: &Open<L>) {
    let place = FreshSchema::new(url);
    let schema = place.name();
    let a = open(url, options(schema, "a", Hooks::none())).expect("open a");
    let b = open(url, options(schema, "b", Hooks::none())).expect("open b");
    assert_eq!(a.apply(&key(), &request(UNITS)), Ok(fresh_receipt()));
    assert_eq!(b.apply(&key(), &request(UNITS + 1)), Err(Error::Conflict));
    assert_eq!(
        state(&b),
        (UNITS, 1, Some(fresh_receipt())),
        "nothing written"
    );
}

/// A transaction that fails before COMMIT leaves no effect and no record; the retry applies
/// once.
pub fn rollback_before_commit<L: Ledger>(url: &str, open: &Open<L>) {
    let place = FreshSchema::new(url);
    let schema = place.name();
    let armed = Arc::new(AtomicBool::new(true));
    let fail = Arc::clone(&armed);
    let hooks = Hooks::with(move |point| {
        if point == Point::AfterRecord && fail.swap(false, Ordering::SeqCst) {
            panic!("the application fails after writing, before COMMIT");
        }
    });
    let ledger = open(url, options(schema, "a", hooks)).expect("open");
    let observer = open(url, options(schema, "observer", Hooks::none())).expect("open");
    let failed = catch_unwind(AssertUnwindSafe(|| ledger.apply(&key(), &request(UNITS))));
    assert!(failed.is_err(), "the hook made the first attempt fail");
    assert_eq!(
        state(&observer),
        (0, 0, None),
        "rolled back: no effect, no record"
    );
    assert_eq!(ledger.apply(&key(), &request(UNITS)), Ok(fresh_receipt()));
    assert_eq!(
        state(&observer),
        (UNITS, 1, Some(fresh_receipt())),
        "applied once"
    );
}

/// The server terminates the connection just before COMMIT: the caller sees a storage error
/// (outcome unknown), nothing committed, and the retry applies once.
pub fn backend_terminated_before_commit<L: Ledger>(url: &str, open: &Open<L>) {
    let place = FreshSchema::new(url);
    let schema = place.name();
    let name = format!("{schema}_a");
    let (hook_url, hook_schema, hook_name) = (url.to_owned(), schema.to_owned(), name.clone());
    let armed = Arc::new(AtomicBool::new(true));
    let hooks = Hooks::with(move |point| {
        if point == Point::AfterRecord && armed.swap(false, Ordering::SeqCst) {
            let (url, schema, name) = (hook_url.clone(), hook_schema.clone(), hook_name.clone());
            // The hook runs inside the ledger's runtime: talk to the server from another thread.
            std::thread::spawn(move || terminate(&url, &schema, &name))
                .join()
                .expect("terminate");
        }
    });
    let ledger = open(url, options(schema, "a", hooks)).expect("open");
    let observer = open(url, options(schema, "observer", Hooks::none())).expect("open");
    let reply = ledger.apply(&key(), &request(UNITS));
    assert!(
        matches!(reply, Err(Error::Storage(_))),
        "outcome unknown, got {reply:?}"
    );
    assert_eq!(state(&observer), (0, 0, None), "nothing committed");
    assert_eq!(ledger.apply(&key(), &request(UNITS)), Ok(fresh_receipt()));
    assert_eq!(
        state(&observer),
        (UNITS, 1, Some(fresh_receipt())),
        "applied once"
    );
}

/// Terminates the backends named `name` and waits until they are gone.
fn terminate(url: &str, schema: &str, name: &str) {
    let admin = Admin::connect(url, schema).expect("admin");
    admin
        .number(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
             WHERE application_name = $1",
            &[&name],
        )
        .expect("pg_terminate_backend");
    let deadline = Instant::now() + Duration::from_secs(60);
    while admin
        .number(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1",
            &[&name],
        )
        .expect("pg_stat_activity")
        > 0
    {
        assert!(Instant::now() < deadline, "the backend did not exit");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn lost_around_commit<L: Ledger>(url: &str, open: &Open<L>, fault: CommitCut) {
    let place = FreshSchema::new(url);
    let schema = place.name();
    let proxy = FaultProxy::in_front_of(url).expect("proxy");
    let ledger = open(&proxy.url(url), options(schema, "a", Hooks::none())).expect("open");
    let observer = open(url, options(schema, "observer", Hooks::none())).expect("open");
    proxy.arm(fault);
    let reply = ledger.apply(&key(), &request(UNITS));
    assert!(
        matches!(reply, Err(Error::Storage(_))),
        "outcome unknown, got {reply:?}"
    );
    let committed = fault == CommitCut::AfterCommit;
    let expected = if committed {
        (UNITS, 1, Some(fresh_receipt()))
    } else {
        (0, 0, None)
    };
    assert_eq!(
        state(&observer),
        expected,
        "what the server holds after the cut"
    );
    let retry = ledger.apply(&key(), &request(UNITS));
    let receipt = if committed {
        fresh_receipt().replay()
    } else {
        fresh_receipt()
    };
    assert_eq!(retry, Ok(receipt), "the retry finds out what happened");
    assert_eq!(
        state(&observer),
        (UNITS, 1, Some(fresh_receipt())),
        "exactly one effect"
    );
}

/// The connection is lost before COMMIT reaches the server: storage error, nothing committed,
/// the retry applies once.
pub fn connection_lost_before_commit<L: Ledger>(url: &str, open: &Open<L>) {
    lost_around_commit(url, open, CommitCut::BeforeCommit);
}

/// The server commits but the connection is lost before its reply arrives: storage error,
/// everything committed, the retry replays the receipt.
pub fn reply_lost_after_commit<L: Ledger>(url: &str, open: &Open<L>) {
    lost_around_commit(url, open, CommitCut::AfterCommit);
}
