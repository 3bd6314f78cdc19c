//! Stage 6: the Idempotency-Key layer's store in a database, so that replicas share one authority.
//!
//! A [`MemoryEntries`](retrykey_http::MemoryEntries) belongs to one process: two `payments`
//! replicas behind one address would each charge a retried request. Here the layer's records
//! live in SQLite ([`SqliteEntries`], one file for every process on a machine) or PostgreSQL
//! ([`PgEntries`], every machine). A handler whose rows live in the same database writes them
//! and its key's answer in one transaction ([`SqliteEntries::commit`], [`PgEntries::commit`]),
//! as the demo's charges do.
//!
//! A replica can die, or pause, in the middle of a request. Its in-flight record therefore has
//! an owner, a lease the running attempt renews, and a fencing token that only grows. Once the
//! lease lapses another replica may take the key over, with a higher token; the database then
//! refuses every write that carries the old one, so a paused owner that wakes up changes
//! nothing.
//!
//! # Example
//!
//! ```
//! use retrykey_http::IdempotencyLayer;
//! use retrykey_replicas::{SqliteEntries, StoreOptions};
//!
//! # fn main() -> Result<(), retrykey_http::Error> {
//! let path = std::env::temp_dir().join(format!("retrykey-doc-{}.sqlite", std::process::id()));
//! let store = SqliteEntries::open(&path, StoreOptions::default())?;
//! // The layer keeps its keys in the file; a handler behind it commits its own rows with the
//! // key's answer through the same store (`store.commit`, see `Effect`).
//! let layer = IdempotencyLayer::builder().store(store.clone()).build();
//! # let _ = layer;
//! # drop(store);
//! # for suffix in ["", "-wal", "-shm"] {
//! #     let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
//! # }
//! # Ok(())
//! # }
//! ```
//!
//! # Features
//!
//! `sqlite` and `postgres` (both on by default) are the two stores; a service on one database
//! can turn the other off. `demo` (off) adds the lab's payments demo and its programs.
//!
//! # Reading order
//!
//! 1. `lease.rs`: what a lease is, and why it is not enough on its own.
//! 2. `sqlite/claim.rs`: a claim, fresh or a takeover with a higher token.
//! 3. `sqlite/fence.rs`: the check every write makes, and the writes.
//! 4. `effect.rs` and `sqlite/commit.rs`: a handler's own rows and the key's answer in one
//!    transaction, the call every handler makes ([`SqliteEntries::commit`]), and the phases of
//!    a handler that calls another service before it answers ([`SqliteEntries::phase`]);
//!    `payments.rs`: the demo's charge through `commit`.
//! 5. `store.rs`: the store and the payments ledger around them, written once for both
//!    databases; `sqlite/mod.rs`: what SQLite does for it; `wait.rs`: how a duplicate in
//!    another process waits; `attempts.rs`: the renewals and finished answers of this
//!    process's attempts.
//! 6. `pg/`: the same on PostgreSQL ([`PgEntries::commit`]); `open.rs`: how the server picks
//!    a store.
//! 7. `bin/payments.rs` (its crash points in `crash.rs`; the flags' values, start-up and
//!    clock come from `retrykey-program`) and `bin/spray.rs`: the server, and the client that
//!    sprays replicas.

#[cfg(not(any(feature = "sqlite", feature = "postgres")))]
compile_error!("retrykey-replicas stores keys in a database: turn on `sqlite`, `postgres` or both");

mod attempts;
pub mod crash;
mod effect;
pub mod lease;
#[cfg(feature = "demo")]
pub mod open;
#[cfg(feature = "demo")]
pub mod payments;
#[cfg(feature = "postgres")]
pub mod pg;
#[doc(hidden)]
pub mod record;
#[cfg(feature = "sqlite")]
pub mod sqlite;
mod store;
mod wait;

use retrykey_http::StoreLimits;
#[cfg(feature = "sqlite")]
use retrykey_http::{EntryId, Fingerprint, Reserve, Token};
use retrykey_program::Clock;
#[cfg(feature = "sqlite")]
use rusqlite::Transaction;

/// The SQLite client whose `Transaction` [`SqliteEntries::commit`] hands to a handler: rusqlite
/// links one SQLite per build, so a service uses this very version (see the manifest).
#[cfg(feature = "sqlite")]
pub use rusqlite;
/// The PostgreSQL client whose `Transaction` [`PgEntries::commit`] hands to a handler.
#[cfg(feature = "postgres")]
pub use tokio_postgres;

pub use effect::{CommitError, Effect};
#[cfg(feature = "postgres")]
pub use effect::{PhaseFuture, WorkFuture};
pub use lease::Lease;
#[cfg(feature = "demo")]
pub use open::{Opened, StoreChoice};
#[cfg(feature = "demo")]
pub use payments::{PgPayments, SqlitePayments};
#[cfg(feature = "postgres")]
pub use pg::{PgBackend, PgEntries};
#[cfg(feature = "sqlite")]
pub use sqlite::{SqliteBackend, SqliteEntries};
pub use store::{ClaimTerms, DbEntries};

/// How a database store behaves: its bounds, its lease, who it says it is, and its clock.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// Entries, bytes and retention, as for every store.
    pub limits: StoreLimits,
    /// How long an in-flight record stays with its owner without renewal.
    pub lease: Lease,
    /// The name this replica writes into the records it claims: for an operator reading them,
    /// and for the store to recognise a claim of its own whose reply was lost. Keep it unique
    /// per process.
    pub owner: String,
    /// The clock leases and retention are read from.
    pub clock: Clock,
}

impl Default for StoreOptions {
    /// Default limits and lease; the owner is this process (`pid <n> <tag>`, the tag drawn at
    /// random, so that two processes with one pid on two machines differ).
    fn default() -> Self {
        Self {
            limits: StoreLimits::default(),
            lease: Lease::default(),
            owner: format!("pid {} {:08x}", std::process::id(), random_tag()),
            clock: Clock::system(),
        }
    }
}

/// 32 random bits, from the standard library's per-process hash seed.
fn random_tag() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    (hasher.finish() >> 32) as u32
}

impl StoreOptions {
    /// The same, with a short lease: a test knob for the tests that kill a replica, compiled
    /// only with the `test-support` feature.
    #[cfg(feature = "test-support")]
    pub fn with_lease(self, duration: std::time::Duration) -> Self {
        Self {
            lease: Lease {
                duration,
                ..self.lease
            },
            ..self
        }
    }
}

/// The SQLite claim and fence, one file each (`sqlite/claim.rs`, `sqlite/fence.rs`).
///
/// Every method has the correct default, and [`StandardFence`] uses them all. The negative
/// variants under `labs/` each replace the methods of their one file, so the shared checks
/// (`retrykey-replicas-checks`) run the same store around exactly one broken piece. A seam for
/// the labs, hidden from the documented API (see `labs/README.md`).
#[cfg(feature = "sqlite")]
#[doc(hidden)]
pub trait FenceSteps: Send + Sync + 'static {
    /// Claims a key: see [`sqlite::claim::claim`].
    fn claim(
        &self,
        tx: &Transaction<'_>,
        id: &EntryId,
        fingerprint: &Fingerprint,
        terms: &ClaimTerms<'_>,
    ) -> rusqlite::Result<Reserve> {
        sqlite::claim::claim(tx, id, fingerprint, terms)
    }

    /// Whether a token still holds its key: see [`sqlite::fence::holds`].
    fn holds(&self, tx: &Transaction<'_>, id: &EntryId, token: Token) -> rusqlite::Result<bool> {
        sqlite::fence::holds(tx, id, token)
    }

    /// Stores a key's answer: see [`sqlite::fence::finish`].
    fn finish(
        &self,
        tx: &Transaction<'_>,
        id: &EntryId,
        columns: &record::ResponseColumns,
        expires_at: i64,
    ) -> rusqlite::Result<()> {
        sqlite::fence::finish(tx, id, columns, expires_at)
    }

    /// Extends a held lease: see [`sqlite::fence::renew`].
    fn renew(
        &self,
        tx: &Transaction<'_>,
        id: &EntryId,
        token: Token,
        until: i64,
    ) -> rusqlite::Result<bool> {
        sqlite::fence::renew(tx, id, token, until)
    }
}

/// The correct claim and fence: what a store uses unless told otherwise.
#[cfg(feature = "sqlite")]
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default)]
pub struct StandardFence;

#[cfg(feature = "sqlite")]
impl FenceSteps for StandardFence {}
