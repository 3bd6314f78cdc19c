//! The checkout's own rows, kept in the key's store: what a phase writes, and where an operation
//! stands.
//!
//! Every phase is one local transaction of the store that holds the key, fenced by the
//! attempt's reservation, and it writes its recovery point with its rows: a crash before the
//! commit leaves neither, a crash after it leaves both. The last phase stores the key's answer
//! too. [`SqliteBooks`](crate::SqliteBooks) and [`PgBooks`](crate::PgBooks) keep the same rows
//! in the two databases of stage 6.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use retrykey_http::{Entries, EntryId, Fingerprint, Reservation, StoredResponse};
use retrykey_replicas::CommitError;

/// What a [`Books`] method returns: boxed, so that the checkout can hold any books.
pub type BooksFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, BooksError>> + Send + 'a>>;

/// Where an operation stands: the last recovery point that committed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Point {
    /// The order exists, pending; the provider may or may not have charged.
    OrderCreated,
    /// The provider charged; the order is not confirmed yet.
    Charged,
    /// The operation ended: the order paid or declined, and the key's answer stored.
    Finished,
}

impl Point {
    /// Every point, in the order an operation passes them.
    pub const ALL: [Self; 3] = [Self::OrderCreated, Self::Charged, Self::Finished];

    /// The name the `checkouts` table holds.
    pub fn name(self) -> &'static str {
        match self {
            Self::OrderCreated => "order_created",
            Self::Charged => "charged",
            Self::Finished => "finished",
        }
    }

    /// The point named `name`, as the table holds it.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|point| point.name() == name)
    }
}

/// One operation, a purchase, as its request asked for it: the entry of its key, the request's fingerprint
/// (so that a completer can claim the key as the request would), and what it charges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Purchase {
    /// The operation's entry: the caller's scope and its key.
    pub id: EntryId,
    /// What the layer bound the key to.
    pub fingerprint: Fingerprint,
    /// What it charges, in the smallest unit of the currency.
    pub amount: i64,
}

/// One operation's row: its order, its amount, its point and, once charged, the charge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// The order it created.
    pub order: i64,
    /// What it charges.
    pub amount: i64,
    /// The last recovery point that committed.
    pub point: Point,
    /// The provider's charge number, from `charged` on; none for a declined card.
    pub charge: Option<i64>,
}

/// How an operation ends, in its last phase.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// The order paid, and one shipment queued for it.
    Paid(StoredResponse),
    /// The card declined: the order declined, nothing shipped.
    Declined(StoredResponse),
}

/// One order, as `GET /orders` lists it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Order {
    /// Its number.
    pub order: i64,
    /// What it costs.
    pub amount: i64,
    /// `pending`, `paid` or `declined`.
    pub status: String,
    /// How many shipments were queued for it: one for a paid order, none otherwise.
    pub shipments: i64,
}

/// Why a phase kept nothing.
#[derive(Debug, thiserror::Error)]
pub enum BooksError {
    /// Another attempt holds the key now (a higher token): this attempt wrote nothing, and the
    /// one that holds the key gives the answer.
    #[error("this attempt no longer holds its key")]
    Fenced,
    /// The operation's row was begun by another request under the same key (another body, or
    /// another caller): this request may not resume it, and wrote nothing.
    #[error("the key's operation belongs to another request")]
    Reused,
    /// The store failed, or the commit's outcome is unknown: a retry finds out.
    #[error("the store failed: {0}")]
    Store(String),
}

impl<E: fmt::Display> From<CommitError<E>> for BooksError {
    fn from(error: CommitError<E>) -> Self {
        match error {
            CommitError::Fenced => Self::Fenced,
            other => Self::Store(other.to_string()),
        }
    }
}

/// The checkout's tables in the key's store, one method per phase.
///
/// Each phase method commits under `fence`, the reservation of the attempt that runs it, and
/// writes the rows of the operation `operation` names. The two are the same entry for every
/// attempt the key lets in: the client's, or the completer's after it claimed the key.
pub trait Books: Send + Sync + 'static {
    /// The key's store, for the layer and the completer.
    fn entries(&self) -> Arc<dyn Entries>;

    /// Phase 1, ending at `order_created`: the order (pending) and the operation's row, or the
    /// row an earlier attempt of the same request left, unchanged; [`BooksError::Reused`] for
    /// a row another request under the key began.
    fn start(&self, fence: Reservation, purchase: Purchase) -> BooksFuture<'_, Progress>;

    /// Phase 2, ending at `charged`: the provider's charge number.
    fn charged(&self, fence: Reservation, operation: EntryId, charge: i64) -> BooksFuture<'_, ()>;

    /// The last phase, ending at `finished`: the order's end and the key's answer, in one
    /// commit; returns the answer.
    fn finish(
        &self,
        fence: Reservation,
        operation: EntryId,
        order: i64,
        end: End,
    ) -> BooksFuture<'_, StoredResponse>;

    /// Operations stopped before `finished` and untouched for `idle`, oldest first, at most
    /// `limit`.
    fn stalled(&self, idle: Duration, limit: usize) -> BooksFuture<'_, Vec<Purchase>>;

    /// Deletes the rows of at most `limit` operations finished more than `retention` ago;
    /// returns how many went. The orders stay: they are the shop's records.
    fn reap(&self, retention: Duration, limit: usize) -> BooksFuture<'_, usize>;

    /// Every order, oldest first.
    fn orders(&self) -> BooksFuture<'_, Vec<Order>>;
}

/// Milliseconds since the epoch, as the rows' `updated_ms` holds them.
pub fn now_ms() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

/// `now_ms()` less `span`, the cut-off of a bounded sweep.
pub fn before(span: Duration) -> i64 {
    now_ms().saturating_sub(i64::try_from(span.as_millis()).unwrap_or(i64::MAX))
}
