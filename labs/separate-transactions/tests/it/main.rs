//! The variant `separate-transactions` under the shared checks: the ones its Cargo.toml declares must fail.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

use retrykey_durable_checks::crash::harness::ProcessHarness;
use retrykey_durable_checks::crash::server::Backend;
use separate_transactions::SqliteLedger;

// The Stage 1 contract, model and stress suites on this variant's SQLite ledger.
retrykey_contract::ledger_suite!(|limits| {
    SqliteLedger::ephemeral(limits).expect("a fresh SQLite ledger in the temporary directory")
});

// The crash matrix on this variant's SQLite ledger: the real process, aborted at each point.
retrykey_durable_checks::crash_suite!(ProcessHarness::new(
    env!("CARGO_BIN_EXE_crash-server-separate-transactions"),
    Backend::fresh_sqlite()
));
