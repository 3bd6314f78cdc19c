//! The payments table beside the keys: a charge and its key's answer commit in one transaction.
//!
//! As in `sqlite/charge.rs`: a crash before the commit leaves neither the charge nor the answer
//! (the key's lease lapses and a retry runs it again); a crash after leaves both (a retry
//! replays the answer). What surrounds the transaction is `store.rs`.

use retrykey_crashpoints::at;
use retrykey_http::Reservation;

use crate::crash::Point;
use crate::pg::fence;
use crate::pg::pool::{Connection, PgResult};
use crate::store::Charge;

/// Makes `charge` in one transaction, with the key's answer when there is a reservation;
/// `None`, with nothing written, when the fence refuses.
pub(crate) async fn charge(conn: &mut Connection, charge: Charge) -> PgResult<Option<u64>> {
    let (amount, reservation) = (charge.amount, charge.reservation);
    // The fence first: a paused replica whose key was taken over charges nothing. It also
    // locks the key's row until the commit.
    let held = match reservation {
        Some(Reservation { id, token }) => fence::begin_if_held(conn, &id, token).await?,
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
            let answer = charge.answer(payment);
            fence::finish_and_commit(conn, &id, &answer.columns, answer.expires_at).await?;
        }
        None => conn.batch("COMMIT").await?,
    }
    Ok(Some(payment))
}
