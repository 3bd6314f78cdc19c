//! Every interleaving of two and three callers, under `RUSTFLAGS="--cfg loom"`.
#![cfg(loom)]

use split_critical_section::Store;

retrykey_contract::loom_suite!(Store::with_limits);
