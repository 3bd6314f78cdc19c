//! The Stage 1 contract, model and stress suites on this variant's PostgreSQL ledger.
//! Ignored, not passed, when RETRYKEY_PG_URL is not set.

use check_then_insert::PgLedger;
use retrykey_durable_checks::admin::url;

retrykey_contract::ledger_suite!(
    #[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
    |limits| PgLedger::ephemeral(&url(), limits).expect("a fresh PostgreSQL ledger")
);
