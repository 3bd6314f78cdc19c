//! The root of the `budget-reset-per-layer` lab. Its `src/lib.rs` is a copy of
//! `crates/retrykey-client/src/nesting.rs`, mounted here as a module of the same name: the copy
//! names what it takes from its crate by `crate::` paths, and this root answers them with the names
//! `retrykey-client`'s own root has.

use retrykey_client::*;

#[path = "lib.rs"]
mod nesting;

pub use nesting::child_budget;
