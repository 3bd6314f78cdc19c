//! The integration tests of `retrykey`.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

#[cfg(not(loom))]
mod default_limits;
#[cfg(not(loom))]
mod story;
#[cfg(not(loom))]
mod values;

use retrykey::Store;

// The in-memory store passes the whole ledger contract.
#[cfg(not(loom))]
retrykey_contract::contract_suite!(Store::with_limits);
#[cfg(not(loom))]
retrykey_contract::model_suite!(Store::with_limits);

// The key and the request against an oracle of their rules, over arbitrary Unicode.
#[cfg(not(loom))]
retrykey_contract::values_suite!(key = retrykey::Key, request = retrykey::Request);

// Every interleaving of two and three callers, under `RUSTFLAGS="--cfg loom"` (`just loom`).
#[cfg(loom)]
retrykey_contract::loom_suite!(Store::with_limits);

// 64 threads released together on one key, repeated: `STRESS_ROUNDS` rounds (default 3).
#[cfg(not(loom))]
retrykey_contract::stress_suite!(Store::with_limits);
