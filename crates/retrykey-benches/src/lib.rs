//! The lab's criterion benchmarks, each path measured beside its baseline in the same run.
//!
//! They live in a package of their own, as tokio's do, so that criterion and its dependencies
//! are built only for `cargo bench`: the tests, the loom models and the stress run of the
//! crates they measure build without them.
//!
//! - `benches/ledger.rs` (`just bench`): the core ledger's new operation and replay, beside one
//!   mutex lock and a hash-map lookup or insert.
//! - `benches/executor.rs` (`just bench-client`): the retry executor's cost per attempt.
//! - `benches/durable.rs` (`just bench-durable`): the SQLite and PostgreSQL ledgers.
