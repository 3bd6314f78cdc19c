//! The crash matrix on PostgreSQL: the real crash-server process, aborted at each point,
//! restarted, and retried with the same key. Skipped, with a message, without RETRYKEY_PG_URL.

use retrykey_durable::crash::harness::ProcessHarness;
use retrykey_durable::crash::server::Backend;
use retrykey_durable::pg::admin::{enabled, url};

retrykey_durable::crash_suite!(
    ProcessHarness::new(
        env!("CARGO_BIN_EXE_crash-server"),
        Backend::fresh_pg(&url())
    ),
    guard = enabled
);
