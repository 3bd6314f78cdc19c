//! The Stage 1 contract, model and stress suites, unchanged, on PostgreSQL (each ledger in a
//! fresh schema). Skipped, with a message, when RETRYKEY_PG_URL is not set.

use retrykey_durable::PgLedger;
use retrykey_durable::pg::admin::{enabled, url};

retrykey_contract::ledger_suite!(
    |limits| PgLedger::ephemeral(&url(), limits).expect("a fresh PostgreSQL ledger"),
    guard = enabled
);
