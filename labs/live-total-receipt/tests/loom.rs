//! Every interleaving of two and three callers, under `RUSTFLAGS="--cfg loom"`.
#![cfg(loom)]

use live_total_receipt::Store;

retrykey_contract::loom_suite!(Store::with_limits);
