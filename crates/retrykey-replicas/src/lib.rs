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
//! use retrykey_http::{IdempotencyLayer, payments::Payments};
//! use retrykey_replicas::{SqliteEntries, SqlitePayments, StoreOptions};
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! # fn main() -> Result<(), retrykey_http::Error> {
//! let path = std::env::temp_dir().join(format!("retrykey-doc-{}.sqlite", std::process::id()));
//! let store = SqliteEntries::open(&path, StoreOptions::default())?;
//! let payments = Payments::with_ledger(Duration::ZERO, Arc::new(SqlitePayments::new(&store)));
//! let layer = IdempotencyLayer::builder().store(store).build();
//! # let _ = (layer, payments);
//! # for suffix in ["", "-wal", "-shm"] {
//! #     let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
//! # }
//! # Ok(())
//! # }
//! ```
//!
//! # Reading order
//!
//! 1. `lease.rs`: what a lease is, and why it is not enough on its own.
//! 2. `sqlite/claim.rs`: a claim, fresh or a takeover with a higher token.
//! 3. `sqlite/fence.rs`: the check every write makes, and the writes.
//! 4. `effect.rs` and `sqlite/commit.rs`: a handler's own rows and the key's answer in one
//!    transaction, the call every handler makes ([`SqliteEntries::commit`]); `payments.rs`:
//!    the demo's charge through it.
//! 5. `store.rs`: the store and the payments ledger around them, written once for both
//!    databases; `sqlite/mod.rs`: what SQLite does for it; `wait.rs`: how a duplicate in
//!    another process waits; `attempts.rs`: the renewals and finished answers of this
//!    process's attempts.
//! 6. `pg/`: the same on PostgreSQL ([`PgEntries::commit`]); `open.rs`: how the server picks
//!    a store.
//! 7. `bin/payments.rs` (its crash points in `crash.rs`; the flags' values, start-up and
//!    clock come from `retrykey-program`) and `bin/spray.rs`: the server, and the client that
//!    sprays replicas.

mod attempts;
pub mod crash;
mod effect;
pub mod lease;
pub mod open;
pub mod payments;
pub mod pg;
#[doc(hidden)]
pub mod record;
pub mod sqlite;
mod store;
mod wait;

use retrykey_http::{EntryId, Fingerprint, Reserve, StoreLimits, Token};
use retrykey_program::Clock;
use rusqlite::Transaction;

pub use effect::{CommitError, Effect, WorkFuture};
pub use lease::Lease;
pub use open::{Opened, StoreChoice};
pub use payments::{PgPayments, SqlitePayments};
pub use pg::{PgBackend, PgEntries};
pub use sqlite::{SqliteBackend, SqliteEntries};
pub use store::{ClaimTerms, DbEntries};

/// How a database store behaves: its bounds, its lease, who it says it is, and its clock.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// Entries, bytes and retention, as for every store.
    pub limits: StoreLimits,
    /// How long an in-flight record stays with its owner without renewal.
    pub lease: Lease,
    /// The name this replica writes into the records it claims (for an operator reading them).
    pub owner: String,
    /// The clock leases and retention are read from.
    pub clock: Clock,
}

impl Default for StoreOptions {
    /// Default limits and lease; the owner is this process (`pid <n>`).
    fn default() -> Self {
        Self {
            limits: StoreLimits::default(),
            lease: Lease::default(),
            owner: format!("pid {}", std::process::id()),
            clock: Clock::system(),
        }
    }
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
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default)]
pub struct StandardFence;

impl FenceSteps for StandardFence {}
