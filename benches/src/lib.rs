//! The lab's measurements, each path measured beside its baseline in the same run.
//!
//! They live in a package of their own, as tokio's benchmarks do, and it is not a default member:
//! `cargo test` builds none of them, so criterion and the load programs never slow a first test
//! run, and the tests, loom models and stress run of the crates they measure build without them.
//!
//! Criterion benchmarks (`cargo bench`):
//! - `benches/ledger.rs` (`just bench`): the core ledger's new operation and replay, beside one
//!   mutex lock and a hash-map lookup or insert.
//! - `benches/executor.rs` (`just bench-client`): the retry executor's cost per attempt.
//! - `benches/durable.rs` (`just bench-durable`): the SQLite and PostgreSQL ledgers.
//!
//! Load runs (binaries in `src/bin/`, release builds, each bounded in time; criterion is a
//! dev-dependency, so building them never builds it):
//! - `load.rs` and `overhead.rs` (`just load`): the Idempotency-Key layer against the bare
//!   handler, over loopback and in-process.
//! - `pgbench-ratio.rs` (`just pgbench-ratio`): the PostgreSQL ledger against `pgbench -N`.
//! - `store-load.rs` (`just store-load`): the layer over PostgreSQL, SQLite and memory.
//! - `store-scale.rs` (`just store-scale`): the key table filled to 10 million keys, the fresh
//!   key and the sweeper timed at each size.
//! - `outbox-load.rs` (`just outbox-load`): accepting, dispatching and converting jobs.
//! - `flood.rs` (`just flood`, `just flood-check`) and `slow-clients.rs`
//!   (`just slow-clients`): the payments server under hostile clients.
//! - `soak.rs` (`just soak`): the payments server under a steady mix for minutes or an hour,
//!   its memory, files, rows and latency held to bounds.

use std::time::Duration;

/// The latency at quantile `q` (0.5 for p50, 0.99 for p99) of latencies sorted ascending; zero
/// when there are none.
pub fn latency_at(sorted: &[Duration], q: f64) -> Duration {
    let last = sorted.len().saturating_sub(1);
    sorted
        .get(((sorted.len() as f64 * q) as usize).min(last))
        .copied()
        .unwrap_or_default()
}
