//! The crash scenarios on PostgreSQL, one `crash::<point>` test per point, each in a fresh
//! schema (see `crash_sqlite.rs`). Ignored, not passed, without RETRYKEY_PG_URL.

use retrykey_durable_checks::admin::url;
use retrykey_durable_checks::crash::harness::InProcess;
use retrykey_durable_checks::crash::server::{Backend, open_correct};

retrykey_durable_checks::crash_suite!(
    #[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
    InProcess::new(Backend::fresh_pg(&url()), open_correct)
);
