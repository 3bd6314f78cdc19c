//! The root of the `cookie-not-kept` lab. Its `src/lib.rs` is a copy of
//! `crates/retrykey-http/src/engine.rs`, mounted here as a module of the same name: the copy names
//! what it takes from its crate by `crate::` paths, and this root answers them with the names
//! `retrykey-http`'s own root has.

use retrykey_http::*;

#[path = "lib.rs"]
mod engine;

pub use engine::CookieNotKept;
