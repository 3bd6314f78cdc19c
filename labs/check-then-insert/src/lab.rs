//! The root of the `check-then-insert` lab. Its `src/lib.rs` is a copy of
//! `crates/retrykey-durable/src/pg/ledger.rs`, mounted here as a module of the same name: the copy
//! names what it takes from its crate by `crate::` paths, and this root answers them with the names
//! `retrykey-durable`'s own root has.

use retrykey_durable::*;

#[path = "lib.rs"]
mod ledger;

pub use ledger::PgLedger;
