//! The integration tests of `retrykey-durable-checks`.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

use retrykey_durable_checks::admin::url;
use retrykey_durable_checks::crash::Point;
use retrykey_durable_checks::crash::harness::ProcessHarness;
use retrykey_durable_checks::crash::scenario;
use retrykey_durable_checks::crash::server::Backend;

// The crash scenarios against the real crash-server process, aborted by a failpoint at each
// point, restarted, and retried with the same key: what `just crash-matrix` prints, as tests.
const SERVER: &str = env!("CARGO_BIN_EXE_crash-server");

// Requirement: on SQLite, every point's crash ends with exactly one effect and the right receipt.
#[test]
fn sqlite_survives_every_point() {
    for point in Point::ALL {
        let harness = ProcessHarness::new(SERVER, Backend::fresh_sqlite());
        assert_eq!(scenario::check(&harness, point), Ok(()));
    }
}

// Requirement: on PostgreSQL, every point's crash ends with exactly one effect and the right receipt.
retrykey_durable_checks::postgres_test! {
    fn postgres_survives_every_point() {
        for point in Point::ALL {
            let harness = ProcessHarness::new(SERVER, Backend::fresh_pg(&url()));
            assert_eq!(scenario::check(&harness, point), Ok(()));
        }
    }
}
