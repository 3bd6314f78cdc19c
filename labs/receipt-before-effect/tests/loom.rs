//! Every interleaving of two and three callers, under `RUSTFLAGS="--cfg loom"`.
#![cfg(loom)]

use receipt_before_effect::Store;

retrykey_contract::loom_suite!(Store::with_limits);
