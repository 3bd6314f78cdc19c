//! The payments table beside the keys: a charge and its key's answer commit in one transaction.
//!
//! This closes the gap between the work and the record on the HTTP path. A crash before the
//! commit leaves neither the charge nor the answer (the key's lease lapses and a retry runs
//! it again); a crash after leaves both (a retry replays the answer). What surrounds the
//! transaction, the same on both databases, is `store.rs`.

use retrykey_crashpoints::at;
use retrykey_http::Reservation;
use rusqlite::{Transaction, params};

use crate::FenceSteps;
use crate::crash::Point;
use crate::sqlite::Usage;
use crate::store::Charge;

// ANCHOR: charge
/// Makes `charge` in `tx` (a `BEGIN IMMEDIATE` transaction, in a savepoint of its own), with
/// the key's answer when there is a reservation; `None`, with nothing written, when the fence
/// refuses.
pub(crate) fn charge(
    tx: &Transaction<'_>,
    steps: &dyn FenceSteps,
    charge: &Charge,
) -> rusqlite::Result<Option<u64>> {
    let (amount, reservation) = (charge.amount, charge.reservation);
    // The fence first: a paused replica whose key was taken over charges nothing.
    if let Some(Reservation { id, token }) = reservation
        && !steps.holds(tx, &id, token)?
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
        let answer = charge.answer(payment);
        steps.finish(tx, &id, &answer.columns, answer.expires_at)?;
        Usage::add_bytes(tx, answer.columns.size)?;
    }
    Ok(Some(payment))
}
// ANCHOR_END: charge
