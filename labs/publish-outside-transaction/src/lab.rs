//! The root of the `publish-outside-transaction` lab. Its `src/lib.rs` is a copy of
//! `crates/retrykey-outbox/src/sqlite/accept.rs`, mounted here as a module of the same name: the
//! copy names what it takes from its crate by `crate::` paths, and this root answers them with the
//! names `retrykey-outbox`'s own root has.

use retrykey_outbox::*;

#[path = "lib.rs"]
mod accept;

pub use accept::accept;
