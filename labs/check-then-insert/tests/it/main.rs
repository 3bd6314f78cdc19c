//! The variant `check-then-insert` under the shared checks: the ones its Cargo.toml declares must fail.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

use check_then_insert::PgLedger;
use retrykey_durable::LedgerOptions;
use retrykey_durable_checks::admin::url;

// Real PostgreSQL connections on this variant's ledger (see `retrykey_durable_checks::connections`).
retrykey_durable_checks::connections_suite!(|url: &str, options: LedgerOptions| PgLedger::open(
    url, options
));

// The Stage 1 contract, model and stress suites on this variant's PostgreSQL ledger.
// Ignored, not passed, when RETRYKEY_PG_URL is not set.
retrykey_contract::ledger_suite!(
    #[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
    |limits| PgLedger::ephemeral(&url(), limits).expect("a fresh PostgreSQL ledger")
);
