//! The payments table beside the keys: a charge and its key's answer commit in one transaction.
//!
//! This closes the gap between the work and the record on the HTTP path. A crash before the
//! commit leaves neither the charge nor the answer (the key's lease lapses and a retry runs
//! it again); a crash after leaves both (a retry replays the answer).

use retrykey_crashpoints::at;
use retrykey_http::payments::PaymentLedger;
use retrykey_http::{EntriesFuture, Error, Reservation, StoredResponse};
use rusqlite::params;

use crate::crash::Point;
use crate::lease::millis;
use crate::record::ResponseColumns;
use crate::sqlite::{SqliteEntries, Usage};

/// A [`PaymentLedger`] in the same SQLite file as a [`SqliteEntries`].
#[derive(Debug, Clone)]
pub struct SqlitePayments {
    store: SqliteEntries,
}

impl SqlitePayments {
    /// The payments table of `store`'s file.
    pub fn new(store: &SqliteEntries) -> Self {
        Self {
            store: store.clone(),
        }
    }
}

impl PaymentLedger for SqlitePayments {
    // ANCHOR: charge
    fn charge<'a>(
        &'a self,
        amount: u64,
        reservation: Option<Reservation>,
        reply: fn(u64) -> StoredResponse,
    ) -> EntriesFuture<'a, u64> {
        EntriesFuture::new(async move {
            let inner = self.store.inner();
            let steps = *inner.steps();
            let retention = millis(inner.options().limits.retention);
            let clock = inner.options().clock;
            at(Point::Handler);
            let charged = inner
                .write(move |tx| {
                    // The fence first: a paused replica whose key was taken over charges nothing.
                    if let Some(Reservation { id, token }) = reservation
                        && !(steps.holds)(tx, &id, token)?
                    {
                        return Ok(None);
                    }
                    let payment: i64 = tx
                        .prepare_cached(
                            "INSERT INTO payments (amount, entry_id, token) VALUES (?1, ?2, ?3)
                             RETURNING number",
                        )?
                        .query_row(
                            params![
                                amount.cast_signed(),
                                reservation.map(|r| r.id.as_bytes().to_vec()),
                                reservation.map(|r| r.token.0.cast_signed())
                            ],
                            |row| row.get(0),
                        )?;
                    let payment = payment.cast_unsigned();
                    at(Point::Charged);
                    // The key's answer, in the same transaction as the charge.
                    if let Some(Reservation { id, .. }) = reservation {
                        let columns = ResponseColumns::of(&reply(payment));
                        let expires_at = clock.now_ms() + retention;
                        (steps.finish)(tx, &id, &columns, expires_at)?;
                        Usage::add_bytes(tx, columns.size)?;
                    }
                    Ok(Some(payment))
                })
                .await?;
            if charged.is_some() {
                if let Some(Reservation { token, .. }) = reservation {
                    inner.attempts().answered(token);
                }
                at(Point::Committed);
            }
            charged.ok_or(Error::NotOwner)
        })
    }
    // ANCHOR_END: charge

    fn charges(&self) -> EntriesFuture<'_, u64> {
        EntriesFuture::new(async move {
            self.store
                .inner()
                .read(|conn| conn.query_row("SELECT count(*) FROM payments", [], |row| row.get(0)))
                .await
                .map(i64::cast_unsigned)
        })
    }
}
