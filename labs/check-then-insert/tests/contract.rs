//! The Stage 1 contract, model and stress suites on this variant's PostgreSQL ledger.
//! Skipped, with a message, when RETRYKEY_PG_URL is not set.

use check_then_insert::PgLedger;
use retrykey_durable::pg::admin::{enabled, url};

retrykey_contract::ledger_suite!(
    |limits| PgLedger::ephemeral(&url(), limits).expect("a fresh PostgreSQL ledger"),
    guard = enabled
);
