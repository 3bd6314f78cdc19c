//! Every interleaving of two and three callers, under `RUSTFLAGS="--cfg loom"`.
#![cfg(loom)]

use no_receipt::Store;

retrykey_contract::loom_suite!(Store::with_limits);
