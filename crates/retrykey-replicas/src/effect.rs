//! Your own rows and the key's answer in one transaction: what a handler behind the layer calls.
//!
//! The layer stores a key's answer after the handler returns. If the handler's effect lives in
//! another transaction, a crash between the two commits leaves an effect without its answer, and
//! the retry does the work again. A handler whose effect lives in the store's database avoids
//! that gap: it asks the store to [`commit`](crate::SqliteEntries::commit) its rows and the key's
//! answer together, in one transaction that is fenced by the attempt's [`Reservation`]. Then:
//!
//! - a crash before the commit leaves neither (the key's lease lapses, a retry runs afresh);
//! - a crash after it leaves both (a retry replays the answer);
//! - a paused attempt whose key was taken over writes nothing ([`CommitError::Fenced`]): the
//!   database refuses its old token.
//!
//! The store's own tables stay its own: the work gets the transaction and writes its rows, and
//! [`Effect`] hands back the answer; the store writes the key's row.
//!
//! A handler that must call another service before it can answer cannot hold one transaction
//! across that call. It commits its work in phases instead
//! ([`phase`](crate::SqliteEntries::phase)): each one fenced by the same reservation, each
//! ending at a recovery point written with its rows, none storing the answer; the last phase is
//! the `commit` above. A retry that takes the key over resumes from the last point that
//! committed, and the old attempt's phases are refused from then on.
//!
//! # Example (SQLite)
//!
//! ```
//! use http::{HeaderMap, StatusCode};
//! use retrykey_http::{Reservation, StoredResponse};
//! use retrykey_replicas::{CommitError, Effect, SqliteEntries, StoreOptions};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = std::env::temp_dir().join(format!("retrykey-effect-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir)?;
//! let store = SqliteEntries::open(dir.join("shop.sqlite"), StoreOptions::default())?;
//! store
//!     .commit(None, |tx| {
//!         tx.execute_batch("CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY, item TEXT)")?;
//!         let answer = StoredResponse::new(StatusCode::NO_CONTENT, &HeaderMap::new(), b"");
//!         Ok::<_, rusqlite::Error>(Effect::new((), answer))
//!     })
//!     .await?;
//!
//! // Inside a handler behind the layer, `Reservation::current()` is the key's reservation.
//! let effect = store
//!     .commit(Reservation::current(), |tx| {
//!         tx.execute("INSERT INTO orders (item) VALUES (?1)", ["tea"])?;
//!         let id = tx.last_insert_rowid();
//!         let body = format!("{{\"order\":{id}}}");
//!         let answer = StoredResponse::new(StatusCode::CREATED, &HeaderMap::new(), body.as_bytes());
//!         Ok::<_, rusqlite::Error>(Effect::new(id, answer))
//!     })
//!     .await?;
//! assert_eq!(effect.value, 1);
//! let response = effect.response(); // what the handler returns: the key's answer itself
//! assert_eq!(response.status(), StatusCode::CREATED);
//! # drop(store);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok(())
//! # }
//! ```

#[cfg(feature = "postgres")]
use std::future::Future;
#[cfg(feature = "postgres")]
use std::pin::Pin;

use http::Response;
use retrykey_http::{Body, Reservation, StoredResponse};

use crate::crash::Point;
use crate::store::{DbEntries, StoreBackend};

/// Passes the crash point `point` when the commit is a keyed request's (has a reservation): the
/// points mark the path of a keyed request, not every commit (a table created on first use).
pub(crate) fn passed(reservation: Option<Reservation>, point: Point) {
    if reservation.is_some() {
        retrykey_crashpoints::at(point);
    }
}

/// What a handler's work in the key's transaction produced: its own value, and the answer the
/// key keeps (the response a retry replays).
#[derive(Debug, Clone)]
pub struct Effect<T> {
    /// What the work returned for the handler's own use (an order's id, a payment's number).
    pub value: T,
    /// The key's answer, stored in the same transaction as the work's rows.
    pub answer: StoredResponse,
}

impl<T> Effect<T> {
    /// The work's `value`, and the `answer` to keep for the key.
    pub fn new(value: T, answer: StoredResponse) -> Self {
        Self { value, answer }
    }

    /// The answer as the handler's response: the first client gets exactly what a retry will.
    pub fn response(&self) -> Response<Body> {
        self.answer.response()
    }
}

/// The work a [`PgEntries::commit`](crate::PgEntries::commit) runs in its transaction `'t`: a
/// boxed future, so that it can borrow the transaction and still be `Send`.
#[cfg(feature = "postgres")]
pub type WorkFuture<'t, T, E> = Pin<Box<dyn Future<Output = Result<Effect<T>, E>> + Send + 't>>;

/// The work a [`PgEntries::phase`](crate::PgEntries::phase) runs in its transaction `'t`: as
/// [`WorkFuture`], for a phase that commits its rows without the key's answer.
#[cfg(feature = "postgres")]
pub type PhaseFuture<'t, T, E> = Pin<Box<dyn Future<Output = Result<T, E>> + Send + 't>>;

/// Why a [`commit`](crate::SqliteEntries::commit) kept nothing.
#[derive(Debug, thiserror::Error)]
pub enum CommitError<E> {
    /// The work failed; nothing it wrote was kept, and the key's answer was not stored.
    #[error("the work failed: {0}")]
    Work(E),
    /// Another attempt took the key over (a higher token): nothing was written. The attempt
    /// that holds the key now gives its answer; a 503 sends this client back for it.
    #[error("this attempt no longer holds its key")]
    Fenced,
    /// The database could not be reached, or the commit's outcome is unknown (its reply was
    /// lost). Claim neither way: a retry with the same key finds out.
    #[error(transparent)]
    Store(retrykey_http::Error),
}

/// How one commit ended, as the backends report it to [`DbEntries::settle_commit`].
pub(crate) enum Committed<T, E> {
    /// The work's rows (and the key's answer, under a reservation) are committed.
    Kept(Effect<T>),
    /// The fence refused: nothing was written.
    Fenced,
    /// The work failed: nothing was written.
    Failed(E),
}

#[expect(
    private_bounds,
    reason = "a backend is the crate's own, its stores are public"
)]
impl<B: StoreBackend> DbEntries<B> {
    /// What every commit does once its transaction has ended, on either database: remember
    /// that the key's answer is stored, so the layer's completion has nothing left to write.
    pub(crate) fn settle_commit<T, E>(
        &self,
        reservation: Option<Reservation>,
        outcome: Result<Committed<T, E>, retrykey_http::Error>,
    ) -> Result<Effect<T>, CommitError<E>> {
        match outcome {
            Ok(Committed::Kept(effect)) => {
                if let Some(Reservation { token, .. }) = reservation {
                    self.inner.attempts().answered(token);
                }
                passed(reservation, Point::Committed);
                Ok(effect)
            }
            Ok(Committed::Fenced) => Err(CommitError::Fenced),
            Ok(Committed::Failed(error)) => Err(CommitError::Work(error)),
            Err(error) => Err(CommitError::Store(error)),
        }
    }
}
