//! The crash matrix on SQLite: the real crash-server process, aborted at each point,
//! restarted, and retried with the same key.

use retrykey_durable::crash::harness::ProcessHarness;
use retrykey_durable::crash::server::Backend;

retrykey_durable::crash_suite!(ProcessHarness::new(
    env!("CARGO_BIN_EXE_crash-server"),
    Backend::fresh_sqlite()
));
