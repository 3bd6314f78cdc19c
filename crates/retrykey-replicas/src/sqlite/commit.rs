//! A handler's own rows and the key's answer in one SQLite transaction.
//!
//! A crash before the commit leaves neither the rows nor the answer (the key's lease lapses and
//! a retry runs the attempt again); a crash after leaves both (a retry replays the answer). What
//! the store does around it, the same on both databases, is `effect.rs`.

use retrykey_http::Reservation;
use rusqlite::Transaction;

use crate::crash::Point;
use crate::effect::{CommitError, Committed, Effect, passed};
use crate::sqlite::{SqliteEntries, Undone, Usage, unavailable};
use crate::store::{StoreBackend, StoredAnswer};

/// Why the work in a savepoint was undone: the fence refused, the work failed, or SQLite did.
enum Undo<E> {
    Fenced,
    Failed(E),
    Sqlite(rusqlite::Error),
}

impl<E> From<rusqlite::Error> for Undo<E> {
    fn from(error: rusqlite::Error) -> Self {
        Self::Sqlite(error)
    }
}

impl SqliteEntries {
    // ANCHOR: commit
    /// Runs `work` in a write transaction of the store's file and, under a `reservation`,
    /// stores the key's answer ([`Effect::answer`]) in the same transaction, behind the fence:
    /// all of it commits, or none of it does.
    ///
    /// `work` runs on a blocking thread, in a savepoint of a `BEGIN IMMEDIATE` transaction that
    /// may hold other writes of this store too; it must not commit or roll back itself. Without
    /// a reservation (a request without a key) only the work's rows are written.
    ///
    /// # Errors
    ///
    /// [`CommitError::Fenced`] when another attempt holds the key now,
    /// [`CommitError::Work`] when `work` failed, [`CommitError::Store`] when the file did: in
    /// each case nothing was written.
    pub async fn commit<T, E, F>(
        &self,
        reservation: Option<Reservation>,
        work: F,
    ) -> Result<Effect<T>, CommitError<E>>
    where
        T: Send + 'static,
        E: Send + 'static,
        F: FnOnce(&Transaction<'_>) -> Result<Effect<T>, E> + Send + 'static,
    {
        passed(reservation, Point::Handler);
        let (steps, options) = (
            std::sync::Arc::clone(&self.inner.steps),
            self.inner.options().clone(),
        );
        let written = self
            .inner
            .write_with(move |tx| {
                // The fence first: a paused attempt whose key was taken over writes nothing.
                if let Some(Reservation { id, token }) = reservation
                    && !steps.holds(tx, &id, token)?
                {
                    return Err(Undo::Fenced);
                }
                let effect = work(tx).map_err(Undo::Failed)?;
                passed(reservation, Point::Charged);
                // The key's answer, in the same transaction as the work's rows.
                if let Some(Reservation { id, .. }) = reservation {
                    let answer = StoredAnswer::now(&effect.answer, &options);
                    steps.finish(tx, &id, &answer.columns, answer.expires_at)?;
                    Usage::add_bytes(tx, answer.columns.size)?;
                }
                Ok(effect)
            })
            .await;
        let outcome = match written {
            Ok(effect) => Ok(Committed::Kept(effect)),
            Err(Undone::Work(Undo::Fenced)) => Ok(Committed::Fenced),
            Err(Undone::Work(Undo::Failed(error))) => Ok(Committed::Failed(error)),
            Err(Undone::Work(Undo::Sqlite(error))) => Err(unavailable(error)),
            Err(Undone::Store(error)) => Err(error),
        };
        self.settle_commit(reservation, outcome)
    }
    // ANCHOR_END: commit

    /// Runs `work` in a write transaction of the store's file, fenced by `reservation`, and
    /// commits it without storing the key's answer: one atomic phase of a handler that has more
    /// to do before it can answer, such as a call to another service between two phases.
    ///
    /// Each phase ends at a recovery point the handler writes with its rows; a retry that takes
    /// the key over (its lease lapsed) holds a higher token and resumes from the last point that
    /// committed, and from then on every phase of the old attempt is refused and writes
    /// nothing. The phase that answers is [`SqliteEntries::commit`].
    ///
    /// # Errors
    ///
    /// As for [`SqliteEntries::commit`]: [`CommitError::Fenced`] when another attempt holds
    /// the key now, [`CommitError::Work`] when `work` failed, [`CommitError::Store`] when the
    /// file did; in each case nothing was written.
    pub async fn phase<T, E, F>(
        &self,
        reservation: Reservation,
        work: F,
    ) -> Result<T, CommitError<E>>
    where
        T: Send + 'static,
        E: Send + 'static,
        F: FnOnce(&Transaction<'_>) -> Result<T, E> + Send + 'static,
    {
        let steps = std::sync::Arc::clone(&self.inner.steps);
        let written = self
            .inner
            .write_with(move |tx| {
                let Reservation { id, token } = reservation;
                if !steps.holds(tx, &id, token)? {
                    return Err(Undo::Fenced);
                }
                work(tx).map_err(Undo::Failed)
            })
            .await;
        match written {
            Ok(value) => Ok(value),
            Err(Undone::Work(Undo::Fenced)) => Err(CommitError::Fenced),
            Err(Undone::Work(Undo::Failed(error))) => Err(CommitError::Work(error)),
            Err(Undone::Work(Undo::Sqlite(error))) => Err(CommitError::Store(unavailable(error))),
            Err(Undone::Store(error)) => Err(CommitError::Store(error)),
        }
    }
}
