//! The payments table beside the keys: a charge and its key's answer commit in one transaction.
//!
//! As in `sqlite/charge.rs`: a crash before the commit leaves neither the charge nor the answer
//! (the key's lease lapses and a retry runs it again); a crash after leaves both (a retry
//! replays the answer).

use retrykey_crashpoints::at;
use retrykey_http::payments::PaymentLedger;
use retrykey_http::{EntriesFuture, Error, Reservation, StoredResponse};

use crate::crash::Point;
use crate::lease::millis;
use crate::pg::PgEntries;
use crate::pg::fence;
use crate::record::ResponseColumns;

/// A [`PaymentLedger`] in the same PostgreSQL schema as a [`PgEntries`].
#[derive(Debug, Clone)]
pub struct PgPayments {
    store: PgEntries,
}

impl PgPayments {
    /// The payments table of `store`'s schema.
    pub fn new(store: &PgEntries) -> Self {
        Self {
            store: store.clone(),
        }
    }
}

impl PaymentLedger for PgPayments {
    fn charge<'a>(
        &'a self,
        amount: u64,
        reservation: Option<Reservation>,
        reply: fn(u64) -> StoredResponse,
    ) -> EntriesFuture<'a, u64> {
        EntriesFuture::new(async move {
            let inner = self.store.inner();
            let retention = millis(inner.options.limits.retention);
            let clock = inner.options.clock;
            at(Point::Handler);
            let charged = inner
                .pool
                .run(move |conn| {
                    Box::pin(async move {
                        // The fence first: a paused replica whose key was taken over charges
                        // nothing. It also locks the key's row until the commit.
                        let held = match reservation {
                            Some(Reservation { id, token }) => {
                                fence::begin_if_held(conn, &id, token).await?
                            }
                            None => {
                                conn.batch("BEGIN").await?;
                                true
                            }
                        };
                        if !held {
                            conn.batch("ROLLBACK").await?;
                            return Ok(None);
                        }
                        let row = conn
                            .one(
                                "INSERT INTO payments (amount, entry_id, token)
                                 VALUES ($1::bigint, $2, $3::bigint) RETURNING number",
                                &[
                                    &amount.cast_signed(),
                                    &reservation.map(|r| r.id.as_bytes().to_vec()),
                                    &reservation.map(|r| r.token.0.cast_signed()),
                                ],
                            )
                            .await?;
                        let payment = row.get::<_, i64>(0).cast_unsigned();
                        at(Point::Charged);
                        // The key's answer, in the same transaction as the charge.
                        match reservation {
                            Some(Reservation { id, .. }) => {
                                let columns = ResponseColumns::of(&reply(payment));
                                let expires_at = clock.now_ms() + retention;
                                fence::finish_and_commit(conn, &id, &columns, expires_at).await?;
                            }
                            None => conn.batch("COMMIT").await?,
                        }
                        Ok(Some(payment))
                    })
                })
                .await?;
            if charged.is_some() {
                if let Some(Reservation { token, .. }) = reservation {
                    inner.attempts.answered(token);
                }
                at(Point::Committed);
            }
            charged.ok_or(Error::NotOwner)
        })
    }

    fn charges(&self) -> EntriesFuture<'_, u64> {
        EntriesFuture::new(async move {
            self.store
                .inner()
                .pool
                .run(|conn| {
                    Box::pin(async move {
                        let row = conn.one("SELECT count(*) FROM payments", &[]).await?;
                        Ok(row.get::<_, i64>(0).cast_unsigned())
                    })
                })
                .await
        })
    }
}
