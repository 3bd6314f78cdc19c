//! The book's solutions to chapter 5's exercises, compiled and run with the other tests, so a
//! solution the book shows cannot stop compiling or start failing unnoticed.

use std::time::{Duration, SystemTime};

use retrykey::Ledger;
use retrykey_durable::{Durability, Options, SqliteLedger};
use retrykey_durable_checks::crash::Point;
use retrykey_durable_checks::crash::harness::InProcess;
use retrykey_durable_checks::crash::scenario;
use retrykey_durable_checks::crash::server::{Backend, open_correct};

// The helpers exercise 4 tells the student to use: those of the file the test goes in.
use crate::retention::{key, receipt, request};

/// Answers chapter 5, exercise 3: `Durability::Normal` passes every crash point, because a
/// process crash leaves the operating system's page cache, and the commits in it, behind.
// ANCHOR: ch05_normal
#[test]
fn normal_durability_survives_every_crash_point() {
    // The correct ledger, opened with `synchronous = NORMAL` instead of the default `FULL`.
    fn open_normal(
        backend: &Backend,
        options: Options,
    ) -> Result<Box<dyn Ledger>, retrykey_durable::Error> {
        let options = Options {
            durability: Durability::Normal,
            ..options
        };
        open_correct(backend, options)
    }

    for point in Point::ALL {
        // A fresh SQLite file per point, deleted when the harness is dropped.
        let harness = InProcess::new(Backend::fresh_sqlite(), open_normal);
        assert_eq!(scenario::check(&harness, point), Ok(()));
    }
}
// ANCHOR_END: ch05_normal

/// Answers chapter 5, exercise 4: with a zero retention window, the sweep forgets a key as soon
/// as its record is a second old, and the same request then applies a second time.
// ANCHOR: ch05_retention
#[test]
fn zero_window_forgets_at_once() {
    let path = retrykey_durable::sqlite::ephemeral_path();
    let options = Options {
        retention: Duration::ZERO,
        ..Options::default()
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
// ANCHOR_END: ch05_retention
