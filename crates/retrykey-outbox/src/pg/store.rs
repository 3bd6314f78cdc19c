//! PostgreSQL as an [`OutboxStore`]: every call awaited on the caller's runtime, on the serving
//! pool. Only accepting blocks (the ledger's transaction is synchronous): on a blocking thread,
//! or in place for a caller inside [`wait`](crate::store::wait), which is blocked already.

use std::time::{Duration, SystemTime};

use retrykey::{Key, Request};
use retrykey_durable::pg::{Failed, storage};
use retrykey_pg::Connection;

use crate::action::OperatorAction;
use crate::event::millis;
use crate::pg::{PgOutbox, events};
use crate::store::{OutboxStore, StoreCall, waiting};
use crate::{Accepted, Acted, ActionError, Claimed, Error, EventRow};

impl OutboxStore for PgOutbox {
    fn accept<'a>(&'a self, key: &'a Key, job: &'a Request) -> StoreCall<'a, Accepted> {
        let (outbox, key, job) = (self.clone(), key.clone(), job.clone());
        Box::pin(async move {
            // A caller inside `wait` is blocked already: the ledger's own runtime may block it
            // in place, out of `wait`'s runtime, with no thread to hand the call to.
            if waiting() {
                return tokio::task::block_in_place(|| outbox.accept(&key, &job));
            }
            tokio::task::spawn_blocking(move || outbox.accept(&key, &job))
                .await
                .map_err(|error| Error::Interrupted(format!("the accept: {error}")))?
        })
    }

    fn jobs(&self) -> StoreCall<'_, Vec<u64>> {
        let scope = self.scope().to_owned();
        Box::pin(self.run_async(move |connection| {
            let scope = scope.clone();
            Box::pin(async move {
                let rows = connection
                    .client()
                    .query(
                        "SELECT operation FROM operations WHERE scope = $1 ORDER BY operation",
                        &[&scope],
                    )
                    .await
                    .map_err(|error| Failed(storage(error)))?;
                Ok(rows
                    .iter()
                    .map(|row| row.get::<_, i64>(0).cast_unsigned())
                    .collect())
            })
        }))
    }

    fn now_ms(&self) -> i64 {
        PgOutbox::now_ms(self)
    }

    fn claim<'a>(
        &'a self,
        owner: &'a str,
        lease: Duration,
        limit: usize,
    ) -> StoreCall<'a, Vec<Claimed>> {
        let now = self.now_ms();
        let until = now + millis(lease);
        Box::pin(self.run_async(move |connection| {
            let owner = owner.to_owned();
            Box::pin(async move {
                events::claim(connection, &owner, now, until, limit)
                    .await
                    .map_err(Failed)
            })
        }))
    }

    fn mark_delivered<'a>(
        &'a self,
        claimed: &'a Claimed,
        conversion: Option<u64>,
    ) -> StoreCall<'a, bool> {
        let (now, marks) = (self.now_ms(), self.marks());
        Box::pin(self.run_async(move |connection| {
            let claimed = claimed.clone();
            Box::pin(async move {
                events::mark_delivered(connection, &claimed, conversion, now, marks)
                    .await
                    .map_err(Failed)
            })
        }))
    }

    fn postpone<'a>(
        &'a self,
        claimed: &'a Claimed,
        error: &'a str,
        wait: Duration,
    ) -> StoreCall<'a, bool> {
        let due = self.now_ms() + millis(wait);
        Box::pin(self.run_async(move |connection| {
            let (claimed, error) = (claimed.clone(), error.to_owned());
            Box::pin(async move {
                events::postpone(connection, &claimed, &error, due)
                    .await
                    .map_err(Failed)
            })
        }))
    }

    fn mark_rejected<'a>(&'a self, claimed: &'a Claimed, error: &'a str) -> StoreCall<'a, bool> {
        let now = self.now_ms();
        Box::pin(self.run_async(move |connection| {
            let (claimed, error) = (claimed.clone(), error.to_owned());
            Box::pin(async move {
                events::mark_rejected(connection, &claimed, &error, now)
                    .await
                    .map_err(Failed)
            })
        }))
    }

    fn find<'a>(&'a self, id: &'a str) -> StoreCall<'a, Option<EventRow>> {
        Box::pin(self.run_async(move |connection| {
            let id = id.to_owned();
            Box::pin(async move {
                events::find(connection.client(), &id, false)
                    .await
                    .map_err(Failed)
            })
        }))
    }

    fn not_delivered(&self, limit: usize) -> StoreCall<'_, Vec<EventRow>> {
        Box::pin(self.run_async(move |connection| {
            Box::pin(async move {
                events::not_delivered(connection.client(), limit)
                    .await
                    .map_err(Failed)
            })
        }))
    }

    fn events(&self) -> StoreCall<'_, Vec<EventRow>> {
        Box::pin(self.run_async(|connection| {
            Box::pin(async move { events::all(connection.client()).await.map_err(Failed) })
        }))
    }

    fn redrive<'a>(&'a self, id: &'a str) -> StoreCall<'a, Result<Acted, ActionError>> {
        Box::pin(self.act(id, None))
    }

    fn mark_failed<'a>(
        &'a self,
        id: &'a str,
        reason: &'a str,
    ) -> StoreCall<'a, Result<Acted, ActionError>> {
        Box::pin(self.act(id, Some(reason)))
    }

    /// The ledger's expired records (the statement [`PgLedger::sweep`] runs), then the settled
    /// events whose record is gone.
    ///
    /// [`PgLedger::sweep`]: retrykey_durable::PgLedger::sweep
    fn sweep(&self, kept: Duration) -> StoreCall<'_, usize> {
        Box::pin(async move {
            let ledger = self.ledger().options();
            let cutoff = ledger.sweep_cutoff(SystemTime::now());
            self.run_async(|connection| {
                let scope = ledger.scope.clone();
                Box::pin(async move {
                    retrykey_durable::pg::delete_expired(connection.client_mut(), &scope, cutoff)
                        .await
                        .map_err(Failed)
                })
            })
            .await?;
            let before = self.now_ms() - millis(kept);
            self.run_async(move |connection| {
                Box::pin(async move {
                    events::sweep(connection.client(), before)
                        .await
                        .map_err(Failed)
                })
            })
            .await
        })
    }
}

impl PgOutbox {
    /// The operator's re-drive of event `id`, or with a `reason` its mark as failed: reads the
    /// event, decides, and writes the change in one transaction. The row is locked
    /// (`FOR UPDATE`) from the read to the commit, and a refusal rolls the transaction back
    /// before it answers.
    async fn act(
        &self,
        id: &str,
        reason: Option<&str>,
    ) -> Result<Result<Acted, ActionError>, Error> {
        let now = self.now_ms();
        self.run_async(move |connection| {
            let (id, reason) = (id.to_owned(), reason.map(str::to_owned));
            Box::pin(async move {
                let action = reason
                    .as_deref()
                    .map_or(OperatorAction::Redrive, OperatorAction::Fail);
                act_on(connection, &id, action, now).await.map_err(Failed)
            })
        })
        .await
    }
}

/// [`PgOutbox::act`]'s transaction on `connection`.
async fn act_on(
    connection: &mut Connection,
    id: &str,
    action: OperatorAction<'_>,
    now: i64,
) -> Result<Result<Acted, ActionError>, retrykey::Error> {
    let tx = connection
        .client_mut()
        .transaction()
        .await
        .map_err(storage)?;
    let decided = match events::find(&tx, id, true).await? {
        None => Err(ActionError::UnknownEvent(id.to_owned())),
        Some(row) => action.decide(&row, now),
    };
    let changed = match decided {
        Ok(decided) => decided,
        Err(refused) => {
            tx.rollback().await.map_err(storage)?;
            return Ok(Err(refused));
        }
    };
    if changed {
        match action {
            OperatorAction::Redrive => events::redrive(&tx, id, now).await?,
            OperatorAction::Fail(reason) => events::mark_failed(&tx, id, reason, now).await?,
        }
    }
    let event = events::find(&tx, id, false)
        .await?
        .expect("the row locked in this transaction is still there");
    tx.commit().await.map_err(storage)?;
    Ok(Ok(Acted { changed, event }))
}
