//! The root of the `live-total-receipt` lab. Its `src/lib.rs` is a copy of
//! `crates/retrykey/src/store.rs`, mounted here as a module of the same name: the copy names what
//! it takes from its crate by `crate::` paths, and this root answers them with the names
//! `retrykey`'s own root has.

use retrykey::*;

#[path = "lib.rs"]
mod store;

pub use store::Store;
