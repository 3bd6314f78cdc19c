//! A payment's rows on SQLite: each function is the work of one phase, run by the store in its
//! fenced transaction.

use retrykey_http::{EntryId, Fingerprint};
use rusqlite::{OptionalExtension, Transaction, params};

use super::{Begun, Failed, PaymentRequest, Point, Refused, Row, begun, now_ms, started};

/// The payments' table, beside the orders. `entry_id` is the payment's key as the store names it
/// (a digest of the caller and the key, never the key). An order has at most one payment that
/// is not declined.
pub(crate) const TABLE: &str = "CREATE TABLE IF NOT EXISTS payments (
    entry_id    BLOB PRIMARY KEY,
    fingerprint BLOB NOT NULL,
    order_id    INTEGER NOT NULL REFERENCES orders (id),
    amount      INTEGER NOT NULL,
    point       TEXT NOT NULL,
    charge      INTEGER,
    refusal     INTEGER,
    updated_ms  INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS payments_by_point ON payments (point, updated_ms);
CREATE UNIQUE INDEX IF NOT EXISTS payments_one_per_order ON payments (order_id)
    WHERE point <> 'declined'";

const ROW: &str = "SELECT fingerprint, order_id, amount, point, charge, refusal FROM payments";

fn row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    Ok(Row {
        fingerprint: row.get(0)?,
        order: row.get(1)?,
        amount: row.get(2)?,
        point: row.get(3)?,
        charge: row.get(4)?,
        refusal: row.get(5)?,
    })
}

/// Phase 1: the row an earlier attempt left, or a new one at `started`.
pub(super) fn begin(tx: &Transaction<'_>, request: &PaymentRequest) -> Result<Begun, Failed> {
    let id = request.id.as_bytes().as_slice();
    let found = (tx.query_row(&format!("{ROW} WHERE entry_id = ?1"), [id], row)).optional()?;
    if let Some(begun) = begun(found, request)? {
        return Ok(begun);
    }
    let quantity: Option<i64> = tx
        .query_row(
            "SELECT quantity FROM orders WHERE id = ?1",
            [request.order],
            |row| row.get(0),
        )
        .optional()?;
    let Some(quantity) = quantity else {
        return Ok(Begun::Refused(Refused::NoOrder));
    };
    let taken: i64 = tx.query_row(
        "SELECT count(*) FROM payments WHERE order_id = ?1 AND point <> 'declined'",
        [request.order],
        |row| row.get(0),
    )?;
    if taken > 0 {
        return Ok(Begun::Refused(Refused::OrderTaken));
    }
    let payment = started(request, quantity)?;
    tx.execute(
        "INSERT INTO payments (entry_id, fingerprint, order_id, amount, point, updated_ms)
         VALUES (?1, ?2, ?3, ?4, 'started', ?5)",
        params![
            id,
            request.fingerprint.as_bytes().as_slice(),
            payment.order,
            payment.amount,
            now_ms()
        ],
    )?;
    Ok(Begun::Payment(payment))
}

/// Phases 2 and 3: the payment's new point.
pub(super) fn set(tx: &Transaction<'_>, id: &EntryId, point: Point) -> Result<(), Failed> {
    let (name, charge, refusal) = point.columns();
    tx.execute(
        "UPDATE payments SET point = ?2, charge = ?3, refusal = ?4, updated_ms = ?5
         WHERE entry_id = ?1",
        params![id.as_bytes().as_slice(), name, charge, refusal, now_ms()],
    )?;
    Ok(())
}

/// Payments before their end, untouched since `cutoff`, oldest first, at most `limit`.
pub(super) fn stalled(
    tx: &Transaction<'_>,
    cutoff: i64,
    limit: i64,
) -> Result<Vec<PaymentRequest>, Failed> {
    let mut statement = tx.prepare(
        "SELECT entry_id, fingerprint, order_id FROM payments
         WHERE point IN ('started', 'charged') AND updated_ms <= ?1
         ORDER BY updated_ms LIMIT ?2",
    )?;
    let rows = statement.query_map(params![cutoff, limit], |row| {
        Ok(PaymentRequest {
            id: EntryId::from_bytes(row.get(0)?),
            fingerprint: Fingerprint::from_bytes(row.get(1)?),
            order: row.get(2)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Every payment's row, by order.
pub(super) fn rows(tx: &Transaction<'_>) -> Result<Vec<Row>, Failed> {
    let mut statement = tx.prepare(&format!("{ROW} ORDER BY order_id, updated_ms"))?;
    let rows = statement.query_map([], row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}
