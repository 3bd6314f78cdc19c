//! Every interleaving of two and three callers, under `RUSTFLAGS="--cfg loom"`.
#![cfg(loom)]

use capacity_before_lookup::Store;

retrykey_contract::loom_suite!(Store::with_limits);
