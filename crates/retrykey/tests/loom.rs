//! Every interleaving of two and three callers, under `RUSTFLAGS="--cfg loom"` (`just loom`).
#![cfg(loom)]

use retrykey::Store;

retrykey_contract::loom_suite!(Store::with_limits);
