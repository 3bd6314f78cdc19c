//! The payments table beside the keys: a charge and its key's answer commit in one transaction.
//!
//! As in `sqlite/charge.rs`: a crash before the commit leaves neither the charge nor the answer
//! (the key's lease lapses and a retry runs it again); a crash after leaves both (a retry
//! replays the answer). What surrounds the transaction is `store.rs`.
//!
//! The key's answer names the payment, so its number is known before the charge is sent:
//! each store draws numbers from the table's sequence a block at a time
//! ([`PAYMENT_NUMBER_BLOCK`]). The fence, the charge and the key's answer are then one
//! statement, sent on its own, so that it is a transaction of its own: one round trip, and no
//! moment at which the charge is written but not yet committed. A crash before it is sent leaves
//! nothing; a crash after it is sent leaves both, for the server finishes and commits a
//! statement whose client has gone.

use std::ops::Range;
use std::sync::{Mutex, PoisonError};

use retrykey_crashpoints::at;
use retrykey_http::Reservation;
use tokio_postgres::types::ToSql;

use crate::crash::Point;
use crate::pg::PAYMENT_NUMBER_BLOCK;
use crate::pg::fence::{self, fenced_answer};
use crate::pg::pool::{Connection, PgResult};
use crate::store::Charge;

/// The payment numbers this store has drawn and not used yet.
#[derive(Debug, Default)]
pub(crate) struct PaymentNumbers {
    left: Mutex<Range<i64>>,
}

impl PaymentNumbers {
    /// The next number of this store's block, drawing a new block when it is used up.
    async fn next(&self, conn: &mut Connection) -> PgResult<i64> {
        if let Some(number) = self.lock().next() {
            return Ok(number);
        }
        let row = conn
            .one(
                "SELECT nextval(pg_get_serial_sequence('payments', 'number'))",
                &[],
            )
            .await?;
        let first: i64 = row.get(0);
        // Another charge may have drawn a block meanwhile: the later one is kept, and what is
        // left of the earlier one is a gap.
        *self.lock() = first + 1..first + PAYMENT_NUMBER_BLOCK;
        Ok(first)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Range<i64>> {
        self.left.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Makes `charge` in one transaction, with the key's answer when there is a reservation;
/// `None`, with nothing written, when the fence refuses. One round trip (two when the store's
/// block of numbers is used up).
pub(crate) async fn charge(
    conn: &mut Connection,
    numbers: &PaymentNumbers,
    charge: Charge,
) -> PgResult<Option<u64>> {
    let number = numbers.next(conn).await?;
    let payment = number.cast_unsigned();
    let amount = charge.amount.cast_signed();
    // The last moment before anything is written.
    at(Point::Charged);
    let charged = match charge.reservation {
        // The fence, the charge and the key's answer in one statement: a paused replica whose
        // key was taken over charges nothing, and stores nothing.
        Some(Reservation { id, token }) => {
            let answer = charge.answer(payment);
            let more: [&(dyn ToSql + Sync); 2] = [&number, &amount];
            fence::write_answer(conn, CHARGE_AND_ANSWER, (&id, token), &answer, &more).await?
        }
        None => {
            conn.execute(
                "INSERT INTO payments (number, amount) VALUES ($1::bigint, $2::bigint)",
                &[&number, &amount],
            )
            .await?
                == 1
        }
    };
    Ok(charged.then_some(payment))
}

/// The payment (`$11`, of `$12`) inserted where the fence holds, then the key's answer: see
/// [`fence::fenced_answer!`].
const CHARGE_AND_ANSWER: &str = fenced_answer!(
    "charged",
    "charged AS (
         INSERT INTO payments (number, amount, entry_id, token)
         SELECT $11::bigint, $12::bigint, entry_id, token FROM held
         RETURNING number),"
);
