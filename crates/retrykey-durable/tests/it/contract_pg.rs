//! The Stage 1 contract, model and stress suites, unchanged, on PostgreSQL (each ledger in a
//! fresh schema). Ignored, not passed, when RETRYKEY_PG_URL is not set.

use retrykey_durable::PgLedger;
use retrykey_durable_checks::admin::url;

retrykey_contract::ledger_suite!(
    #[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
    |limits| PgLedger::ephemeral(&url(), limits).expect("a fresh PostgreSQL ledger")
);
