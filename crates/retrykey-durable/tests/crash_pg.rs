//! The crash matrix on PostgreSQL: the real crash-server process, aborted at each point,
//! restarted, and retried with the same key. Ignored, not passed, without RETRYKEY_PG_URL.

use retrykey_durable::crash::harness::ProcessHarness;
use retrykey_durable::crash::server::Backend;
use retrykey_durable::pg::admin::url;

retrykey_durable::crash_suite!(
    #[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
    ProcessHarness::new(
        env!("CARGO_BIN_EXE_crash-server"),
        Backend::fresh_pg(&url())
    )
);
