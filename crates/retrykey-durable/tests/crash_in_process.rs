//! The crash scenarios run in-process (a panic at the point instead of an abort), as the
//! workspace tests run them on the variants: the correct ledgers pass every one.

use retrykey_durable::crash::harness::InProcess;
use retrykey_durable::crash::scenario;
use retrykey_durable::crash::server::{Backend, open_correct};
use retrykey_durable::pg::admin::url;

// Requirement: on SQLite, every point's crash ends with exactly one effect and the right receipt.
#[test]
fn sqlite_survives_every_point() {
    for (name, outcome) in
        scenario::run_all(|| InProcess::new(Backend::fresh_sqlite(), open_correct))
    {
        assert_eq!(outcome, Ok(()), "{name}");
    }
}

// Requirement: on PostgreSQL, every point's crash ends with exactly one effect and the right receipt.
retrykey_durable::postgres_test! {
    fn postgres_survives_every_point() {
        for (name, outcome) in
            scenario::run_all(|| InProcess::new(Backend::fresh_pg(&url()), open_correct))
        {
            assert_eq!(outcome, Ok(()), "{name}");
        }
    }
}
