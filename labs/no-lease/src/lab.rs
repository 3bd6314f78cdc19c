//! The root of the `no-lease` lab. Its `src/lib.rs` is a copy of
//! `crates/retrykey-replicas/src/sqlite/claim.rs`, mounted here as a module of the same name: the
//! copy names what it takes from its crate by `crate::` paths, and this root answers them with the
//! names `retrykey-replicas`'s own root has.

use retrykey_replicas::*;

#[path = "lib.rs"]
mod claim;

pub use claim::claim;
