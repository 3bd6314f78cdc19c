//! The Stage 1 contract, model and stress suites on this variant's SQLite ledger.

use record_before_effect::SqliteLedger;

retrykey_contract::ledger_suite!(|limits| {
    SqliteLedger::ephemeral(limits).expect("a fresh SQLite ledger in the temporary directory")
});
