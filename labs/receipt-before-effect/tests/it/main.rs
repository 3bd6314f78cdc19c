//! The variant `receipt-before-effect` under the shared checks: the ones its Cargo.toml declares must fail.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

use receipt_before_effect::Store;

// Every interleaving of two and three callers, under `RUSTFLAGS="--cfg loom"`.
#[cfg(loom)]
retrykey_contract::loom_suite!(Store::with_limits);

// The shared ledger contract, model and stress suites, run against this variant.
#[cfg(not(loom))]
retrykey_contract::ledger_suite!(Store::with_limits);
