//! The root of the `lease-without-fence` lab. Its `src/lib.rs` is a copy of
//! `crates/retrykey-replicas/src/sqlite/fence.rs`, mounted here as a module of the same name: the
//! copy names what it takes from its crate by `crate::` paths, and this root answers them with the
//! names `retrykey-replicas`'s own root has.

use retrykey_replicas::*;

#[path = "lib.rs"]
mod fence;

pub use fence::{finish, holds, renew};
