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
/// `None`, with nothing written, when the fence refuses. Under a reservation, two round
/// trips: `BEGIN` with the fenced insert, then the answer with the `COMMIT`.
pub(crate) async fn charge(conn: &mut Connection, charge: Charge) -> PgResult<Option<u64>> {
    let (amount, reservation) = (charge.amount, charge.reservation);
    let payment = match reservation {
        // The fence and the charge in one statement: a paused replica whose key was taken over
        // charges nothing. The fence locks the key's row until the commit.
        Some(Reservation { id, token }) => fence::insert_if_held(conn, &id, token, amount).await?,
        None => {
            conn.batch("BEGIN").await?;
            let row = conn
                .one(
                    "INSERT INTO payments (amount) VALUES ($1::bigint) RETURNING number",
                    &[&amount.cast_signed()],
                )
                .await?;
            Some(row.get::<_, i64>(0))
        }
    };
    let Some(payment) = payment else {
        conn.batch("ROLLBACK").await?;
        return Ok(None);
    };
    let payment = payment.cast_unsigned();
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
