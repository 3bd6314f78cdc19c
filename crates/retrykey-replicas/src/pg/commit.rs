//! A handler's own rows and the key's answer in one PostgreSQL transaction.
//!
//! As in `sqlite/commit.rs`: a crash before the commit leaves neither the rows nor the answer (the
//! key's lease lapses and a retry runs the attempt again); a crash after leaves both (a retry
//! replays the answer). The fence is the statement that stores the answer, last before the
//! commit: it locks the key's row (`FOR UPDATE`) until the commit, so a takeover either came
//! before it, and it writes nothing and the transaction rolls back, or waits for the commit and
//! then finds the key answered.

use std::sync::Arc;

use retrykey_http::Reservation;
use tokio_postgres::Transaction;

use crate::crash::Point;
use crate::effect::{CommitError, Committed, Effect, PhaseFuture, WorkFuture, passed};
use crate::pg::PgEntries;
use crate::pg::fence::{FINISH, HELD, answer_in};
use crate::pg::pool::{Connection, PgResult};
use crate::store::{StoreBackend, StoredAnswer};

impl PgEntries {
    // ANCHOR: commit
    /// Runs `work` in a transaction on one of the store's connections and, under a
    /// `reservation`, stores the key's answer ([`Effect::answer`]) in the same transaction,
    /// behind the fence: all of it commits, or none of it does.
    ///
    /// `work` gets the open transaction (`search_path` is the store's schema: name your own
    /// tables with their schema, `public.orders`, if they live elsewhere) and must neither
    /// commit nor roll it back. It runs once: a failure is reported, never retried here, since
    /// only the client's retry with the same key can tell what happened.
    ///
    /// # Errors
    ///
    /// [`CommitError::Fenced`] when another attempt holds the key now,
    /// [`CommitError::Work`] when `work` failed, [`CommitError::Store`] when the database did or
    /// the commit's reply was lost: in the first two nothing was written; in the last, a retry
    /// with the same key finds out.
    pub async fn commit<T, E, F>(
        &self,
        reservation: Option<Reservation>,
        work: F,
    ) -> Result<Effect<T>, CommitError<E>>
    where
        T: Send + 'static,
        E: Send + 'static,
        F: for<'t> FnOnce(&'t Transaction<'t>) -> WorkFuture<'t, T, E> + Send + 'static,
    {
        passed(reservation, Point::Handler);
        let options = Arc::new(self.inner.options().clone());
        let outcome = self
            .inner
            .pool
            .run_once(move |conn| {
                Box::pin(async move { in_transaction(conn, reservation, &options, work).await })
            })
            .await;
        self.settle_commit(reservation, outcome)
    }
    // ANCHOR_END: commit

    /// Runs `work` in a transaction fenced by `reservation`, and commits it without storing
    /// the key's answer: one atomic phase of a handler that has more to do before it can
    /// answer, such as a call to another service between two phases.
    ///
    /// The fence comes first: it locks the key's row until the commit, so a takeover either
    /// came before it, and the phase writes nothing, or waits for the phase to commit. Each
    /// phase ends at a recovery point the handler writes with its rows; a retry that took the
    /// key over resumes from the last point that committed. The phase that answers is
    /// [`PgEntries::commit`]; `work` is held to the same rules.
    ///
    /// # Errors
    ///
    /// As for [`PgEntries::commit`]: [`CommitError::Fenced`] when another attempt holds the key
    /// now, [`CommitError::Work`] when `work` failed, [`CommitError::Store`] when the database
    /// did or the commit's reply was lost.
    pub async fn phase<T, E, F>(
        &self,
        reservation: Reservation,
        work: F,
    ) -> Result<T, CommitError<E>>
    where
        T: Send + 'static,
        E: Send + 'static,
        F: for<'t> FnOnce(&'t Transaction<'t>) -> PhaseFuture<'t, T, E> + Send + 'static,
    {
        let outcome = self
            .inner
            .pool
            .run_once(move |conn| Box::pin(async move { phase_in(conn, reservation, work).await }))
            .await;
        match outcome {
            Ok(Phased::Kept(value)) => Ok(value),
            Ok(Phased::Fenced) => Err(CommitError::Fenced),
            Ok(Phased::Failed(error)) => Err(CommitError::Work(error)),
            Err(error) => Err(CommitError::Store(error)),
        }
    }
}

/// How one phase ended.
enum Phased<T, E> {
    Kept(T),
    Fenced,
    Failed(E),
}

/// The fence, then `work`, in one transaction on `conn`.
async fn phase_in<T, E, F>(
    conn: &mut Connection,
    reservation: Reservation,
    work: F,
) -> PgResult<Phased<T, E>>
where
    F: for<'t> FnOnce(&'t Transaction<'t>) -> PhaseFuture<'t, T, E>,
{
    let held = conn.prepared(HELD).await?;
    let tx = conn.client_mut().transaction().await?;
    let Reservation { id, token } = reservation;
    let key = id.as_bytes().as_slice();
    if tx
        .query_opt(&held, &[&key, &token.0.cast_signed()])
        .await?
        .is_none()
    {
        tx.rollback().await?;
        return Ok(Phased::Fenced);
    }
    let value = match work(&tx).await {
        Ok(value) => value,
        Err(error) => {
            tx.rollback().await?;
            return Ok(Phased::Failed(error));
        }
    };
    tx.commit().await?;
    Ok(Phased::Kept(value))
}

/// `work`, then the key's answer, fenced, in one transaction on `conn`.
async fn in_transaction<T, E, F>(
    conn: &mut Connection,
    reservation: Option<Reservation>,
    options: &crate::StoreOptions,
    work: F,
) -> PgResult<Committed<T, E>>
where
    F: for<'t> FnOnce(&'t Transaction<'t>) -> WorkFuture<'t, T, E>,
{
    let finish = conn.prepared(FINISH).await?;
    let tx = conn.client_mut().transaction().await?;
    let effect = match work(&tx).await {
        Ok(effect) => effect,
        Err(error) => {
            tx.rollback().await?;
            return Ok(Committed::Failed(error));
        }
    };
    passed(reservation, Point::Charged);
    if let Some(Reservation { id, token }) = reservation {
        let answer = StoredAnswer::now(&effect.answer, options);
        if !answer_in(&tx, &finish, (&id, token), &answer).await? {
            tx.rollback().await?;
            return Ok(Committed::Fenced);
        }
    }
    tx.commit().await?;
    Ok(Committed::Kept(effect))
}
