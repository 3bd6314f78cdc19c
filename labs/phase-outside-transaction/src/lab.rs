//! The root of the `phase-outside-transaction` lab. Its `src/lib.rs` is a copy of
//! `crates/retrykey-foreign/src/sqlite.rs`, mounted here as a module of the same name: the
//! copy names what it takes from its crate by `crate::` paths, and this root answers them with the
//! names `retrykey-foreign`'s own root has.

use retrykey_foreign::*;

#[path = "lib.rs"]
mod sqlite;

pub use sqlite::SqliteBooks;
