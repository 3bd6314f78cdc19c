//! Stage 6: the Idempotency-Key layer's store in a database, so that replicas share one authority.
//!
//! A [`MemoryEntries`](retrykey_http::MemoryEntries) belongs to one process: two `payments`
//! replicas behind one address would each charge a retried request. Here the layer's records
//! live in SQLite ([`SqliteEntries`], one file for every process on a machine) or PostgreSQL
//! ([`PgEntries`], every machine), and the demo's charges live in the same database, so that a
//! charge and its key's answer commit in one transaction.
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
//! use retrykey_replicas::{Options, SqlitePayments, SqliteEntries};
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! # fn main() -> Result<(), retrykey_http::Error> {
//! let path = std::env::temp_dir().join(format!("retrykey-doc-{}.sqlite", std::process::id()));
//! let store = SqliteEntries::open(&path, Options::default())?;
//! let payments = Payments::with_ledger(Duration::ZERO, Arc::new(SqlitePayments::new(&store)));
//! let layer = IdempotencyLayer::builder().store(store).build();
//! # let _ = (layer, payments);
//! # Ok(())
//! # }
//! ```
//!
//! # Reading order
//!
//! 1. `lease.rs`: what a lease is, and why it is not enough on its own.
//! 2. `sqlite/claim.rs`: a claim, fresh or a takeover with a higher token.
//! 3. `sqlite/fence.rs`: the check every write makes, and the writes.
//! 4. `sqlite/charge.rs`: the charge and the key's answer in one transaction.
//! 5. `sqlite/mod.rs`: the store around them; `wait.rs`: how a duplicate in another process
//!    waits; `attempts.rs`: the renewals and finished answers of this process's attempts.
//! 6. `pg/`: the same on PostgreSQL; `open.rs`: how the server picks a store.
//! 7. `bin/payments.rs` (its crash points in `crash.rs`; the flags' values, start-up and
//!    clock come from `retrykey-program`) and `bin/spray.rs`: the server, and the client that
//!    sprays replicas.

// Mirrored files name this crate `retrykey_replicas`, as their copies under labs/ do: see labs/README.md.
extern crate self as retrykey_replicas;

mod attempts;
pub mod crash;
pub mod lease;
pub mod open;
pub mod pg;
#[doc(hidden)]
pub mod record;
pub mod sqlite;
mod wait;

use retrykey_http::{EntryId, Fingerprint, Reserve, StoreLimits, Token};
use retrykey_program::Clock;
use rusqlite::Transaction;

pub use lease::Lease;
pub use open::{Opened, StoreChoice};
pub use pg::{PgEntries, PgPayments};
pub use sqlite::{SqliteEntries, SqlitePayments};

/// How a database store behaves: its bounds, its lease, who it says it is, and its clock.
#[derive(Debug, Clone)]
pub struct Options {
    /// Entries, bytes and retention, as for every store.
    pub limits: StoreLimits,
    /// How long an in-flight record stays with its owner without renewal.
    pub lease: Lease,
    /// The name this replica writes into the records it claims (for an operator reading them).
    pub owner: String,
    /// The clock leases and retention are read from.
    pub clock: Clock,
}

impl Default for Options {
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

impl Options {
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

/// The SQLite claim and fence, as plain functions: a lab under `labs/` swaps one file's worth.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct FenceSteps {
    pub claim: fn(
        &Transaction<'_>,
        &EntryId,
        &Fingerprint,
        &sqlite::Claim<'_>,
    ) -> rusqlite::Result<Reserve>,
    pub holds: fn(&Transaction<'_>, &EntryId, Token) -> rusqlite::Result<bool>,
    pub finish:
        fn(&Transaction<'_>, &EntryId, &record::ResponseColumns, i64) -> rusqlite::Result<()>,
    pub renew: fn(&Transaction<'_>, &EntryId, Token, i64) -> rusqlite::Result<bool>,
}

impl FenceSteps {
    /// The correct claim and fence.
    pub fn standard() -> Self {
        Self {
            claim: sqlite::claim::claim,
            holds: sqlite::fence::holds,
            finish: sqlite::fence::finish,
            renew: sqlite::fence::renew,
        }
    }
}
