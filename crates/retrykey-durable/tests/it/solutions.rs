//! The book's solutions to chapter 5's exercises, compiled and run with the other tests, so a
//! solution the book shows cannot stop compiling or start failing unnoticed.

use retrykey::Ledger;
use retrykey_durable::{Durability, LedgerOptions};
use retrykey_durable_checks::crash::Point;
use retrykey_durable_checks::crash::harness::InProcess;
use retrykey_durable_checks::crash::scenario;
use retrykey_durable_checks::crash::server::{Backend, open_correct};

/// Answers chapter 5, exercise 3: `Durability::Normal` passes every crash point, because a
/// process crash leaves the operating system's page cache, and the commits in it, behind.
// ANCHOR: ch05_normal
#[test]
fn normal_durability_survives_every_crash_point() {
    // The correct ledger, opened with `synchronous = NORMAL` instead of the default `FULL`.
    fn open_normal(
        backend: &Backend,
        options: LedgerOptions,
    ) -> Result<Box<dyn Ledger>, retrykey_durable::Error> {
        let options = LedgerOptions {
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
