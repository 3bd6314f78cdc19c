//! The root of the `completer-without-fence` lab. Its `src/lib.rs` is a copy of
//! `crates/retrykey-foreign/src/completer.rs`, mounted here as a module of the same name: the
//! copy names what it takes from its crate by `crate::` paths, and this root answers them with the
//! names `retrykey-foreign`'s own root has.

use retrykey_foreign::*;

#[path = "lib.rs"]
mod completer;

pub use completer::claim;
