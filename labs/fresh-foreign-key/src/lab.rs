//! The root of the `fresh-foreign-key` lab. Its `src/lib.rs` is a copy of
//! `crates/retrykey-foreign/src/key.rs`, mounted here as a module of the same name: the
//! copy takes nothing from its crate's root, so this root mounts it and nothing more.

#[path = "lib.rs"]
mod key;

pub use key::foreign_key;
