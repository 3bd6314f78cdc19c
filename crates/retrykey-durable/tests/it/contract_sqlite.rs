//! The Stage 1 contract, model and stress suites, unchanged, on SQLite.

use retrykey_durable::SqliteLedger;

retrykey_contract::ledger_suite!(|limits| {
    SqliteLedger::ephemeral(limits).expect("a fresh SQLite ledger in the temporary directory")
});
