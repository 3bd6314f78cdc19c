//! A payment's phases on the shop's store, whichever database it is: each phase one fenced
//! transaction of the key's store (`phase`), the last one with the key's answer (`commit`).

use std::time::Duration;

use retrykey_http::{EntryId, Reservation};
use retrykey_replicas::{CommitError, Effect};

use super::{Begun, End, Failed, Payment, PaymentRequest, Point, Row, answer, now_ms, pg, sqlite};
use crate::{Shop, Store, no_answer};

impl Shop {
    /// Phase 1, ending at `started`: the payment's row, or the row an earlier attempt left.
    pub(super) async fn begin(
        &self,
        fence: Reservation,
        request: PaymentRequest,
    ) -> Result<Begun, CommitError<Failed>> {
        match &self.store {
            Store::Sqlite(store) => {
                store
                    .phase(fence, move |tx| sqlite::begin(tx, &request))
                    .await
            }
            Store::Postgres(store) => {
                store
                    .phase(fence, move |tx| {
                        Box::pin(async move { pg::begin(tx, &request).await })
                    })
                    .await
            }
        }
    }

    /// Phase 2, ending at `charged`: the provider's charge number.
    pub(super) async fn charged(
        &self,
        fence: Reservation,
        id: EntryId,
        charge: i64,
    ) -> Result<(), CommitError<Failed>> {
        let point = Point::Charged(charge);
        match &self.store {
            Store::Sqlite(store) => {
                store
                    .phase(fence, move |tx| sqlite::set(tx, &id, point))
                    .await
            }
            Store::Postgres(store) => {
                store
                    .phase(fence, move |tx| {
                        Box::pin(async move { pg::set(tx, &id, point).await })
                    })
                    .await
            }
        }
    }

    /// The last phase, ending at `paid` or `declined`: the payment's end and the key's answer,
    /// in one commit.
    pub(super) async fn finish(
        &self,
        fence: Reservation,
        id: EntryId,
        payment: Payment,
        end: End,
    ) -> Result<Effect<()>, CommitError<Failed>> {
        let point = Point::Ended(end);
        match &self.store {
            Store::Sqlite(store) => {
                store
                    .commit(Some(fence), move |tx| {
                        sqlite::set(tx, &id, point)?;
                        Ok(Effect::new((), answer(&payment, end)))
                    })
                    .await
            }
            Store::Postgres(store) => {
                store
                    .commit(Some(fence), move |tx| {
                        Box::pin(async move {
                            pg::set(tx, &id, point).await?;
                            Ok(Effect::new((), answer(&payment, end)))
                        })
                    })
                    .await
            }
        }
    }

    /// Payments stopped before their end and untouched for `idle`, oldest first, at most
    /// `limit`.
    pub(super) async fn stalled(
        &self,
        idle: Duration,
        limit: usize,
    ) -> Result<Vec<PaymentRequest>, CommitError<Failed>> {
        let idle = i64::try_from(idle.as_millis()).unwrap_or(i64::MAX);
        let cutoff = now_ms().saturating_sub(idle);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let read = match &self.store {
            Store::Sqlite(store) => {
                store
                    .commit(None, move |tx| {
                        Ok(Effect::new(
                            sqlite::stalled(tx, cutoff, limit)?,
                            no_answer(),
                        ))
                    })
                    .await
            }
            Store::Postgres(store) => {
                store
                    .commit(None, move |tx| {
                        Box::pin(async move {
                            let stalled = pg::stalled(tx, cutoff, limit).await?;
                            Ok(Effect::new(stalled, no_answer()))
                        })
                    })
                    .await
            }
        };
        Ok(read?.value)
    }

    /// Every payment's row, by order.
    pub(super) async fn payment_rows(&self) -> Result<Vec<Row>, CommitError<Failed>> {
        let read = match &self.store {
            Store::Sqlite(store) => {
                (store.commit(None, |tx| Ok(Effect::new(sqlite::rows(tx)?, no_answer())))).await
            }
            Store::Postgres(store) => {
                store
                    .commit(None, |tx| {
                        Box::pin(async move { Ok(Effect::new(pg::rows(tx).await?, no_answer())) })
                    })
                    .await
            }
        };
        Ok(read?.value)
    }
}
