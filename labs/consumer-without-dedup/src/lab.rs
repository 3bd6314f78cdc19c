//! The root of the `consumer-without-dedup` lab. Its `src/lib.rs` is a copy of
//! `crates/retrykey-converter/src/convert.rs`, mounted here as a module of the same name: the copy
//! names what it takes from its crate by `crate::` paths, and this root answers them with the names
//! `retrykey-converter`'s own root has.

use retrykey_converter::*;

#[path = "lib.rs"]
mod convert;

pub use convert::convert;
