//! The root of the `fresh-key-per-retry` lab. Its `src/lib.rs` is a copy of
//! `crates/retrykey-client/src/executor.rs`, mounted here as a module of the same name: the copy
//! names what it takes from its crate by `crate::` paths, and this root answers them with the names
//! `retrykey-client`'s own root has.

use retrykey_client::*;

#[path = "lib.rs"]
mod executor;

pub use executor::execute;
