//! The crash matrix on this variant's SQLite ledger: the real process, aborted at each point.

use retrykey_durable_checks::crash::harness::ProcessHarness;
use retrykey_durable_checks::crash::server::Backend;

retrykey_durable_checks::crash_suite!(ProcessHarness::new(
    env!("CARGO_BIN_EXE_crash-server-record-before-effect"),
    Backend::fresh_sqlite()
));
