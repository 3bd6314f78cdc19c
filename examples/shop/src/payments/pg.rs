//! A payment's rows on PostgreSQL: the same rows and phases as `sqlite.rs`.

use retrykey_http::{EntryId, Fingerprint};
use tokio_postgres::Transaction;

use super::{Begun, Failed, PaymentRequest, Point, Refused, Row, begun, now_ms, started};

/// The payments' table, as on SQLite (created under the order table's lock).
pub(crate) const TABLE: &str = "CREATE TABLE IF NOT EXISTS payments (
    entry_id    bytea PRIMARY KEY,
    fingerprint bytea NOT NULL,
    order_id    bigint NOT NULL REFERENCES orders (id),
    amount      bigint NOT NULL,
    point       text NOT NULL,
    charge      bigint,
    refusal     bigint,
    updated_ms  bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS payments_by_point ON payments (point, updated_ms);
CREATE UNIQUE INDEX IF NOT EXISTS payments_one_per_order ON payments (order_id)
    WHERE point <> 'declined'";

const ROW: &str = "SELECT fingerprint, order_id, amount, point, charge, refusal FROM payments";

fn row(row: &tokio_postgres::Row) -> Row {
    Row {
        fingerprint: row.get(0),
        order: row.get(1),
        amount: row.get(2),
        point: row.get(3),
        charge: row.get(4),
        refusal: row.get(5),
    }
}

/// Phase 1: the row an earlier attempt left, or a new one at `started`.
pub(super) async fn begin(tx: &Transaction<'_>, request: &PaymentRequest) -> Result<Begun, Failed> {
    let id = request.id.as_bytes().as_slice();
    let found = tx
        .query_opt(&format!("{ROW} WHERE entry_id = $1"), &[&id])
        .await?;
    if let Some(begun) = begun(found.as_ref().map(row), request)? {
        return Ok(begun);
    }
    let order = tx
        .query_opt(
            "SELECT quantity FROM orders WHERE id = $1",
            &[&request.order],
        )
        .await?;
    let Some(order) = order else {
        return Ok(Begun::Refused(Refused::NoOrder));
    };
    let taken: i64 = tx
        .query_one(
            "SELECT count(*) FROM payments WHERE order_id = $1 AND point <> 'declined'",
            &[&request.order],
        )
        .await?
        .get(0);
    if taken > 0 {
        return Ok(Begun::Refused(Refused::OrderTaken));
    }
    let payment = started(request, order.get(0))?;
    tx.execute(
        "INSERT INTO payments (entry_id, fingerprint, order_id, amount, point, updated_ms)
         VALUES ($1, $2, $3, $4, 'started', $5)",
        &[
            &id,
            &request.fingerprint.as_bytes().as_slice(),
            &payment.order,
            &payment.amount,
            &now_ms(),
        ],
    )
    .await?;
    Ok(Begun::Payment(payment))
}

/// Phases 2 and 3: the payment's new point.
pub(super) async fn set(tx: &Transaction<'_>, id: &EntryId, point: Point) -> Result<(), Failed> {
    let (name, charge, refusal) = point.columns();
    tx.execute(
        "UPDATE payments SET point = $2, charge = $3, refusal = $4, updated_ms = $5
         WHERE entry_id = $1",
        &[
            &id.as_bytes().as_slice(),
            &name,
            &charge,
            &refusal,
            &now_ms(),
        ],
    )
    .await?;
    Ok(())
}

/// Payments before their end, untouched since `cutoff`, oldest first, at most `limit`.
pub(super) async fn stalled(
    tx: &Transaction<'_>,
    cutoff: i64,
    limit: i64,
) -> Result<Vec<PaymentRequest>, Failed> {
    let rows = tx
        .query(
            "SELECT entry_id, fingerprint, order_id FROM payments
             WHERE point IN ('started', 'charged') AND updated_ms <= $1
             ORDER BY updated_ms LIMIT $2",
            &[&cutoff, &limit],
        )
        .await?;
    let digest = |bytes: Vec<u8>| <[u8; 32]>::try_from(bytes).map_err(|_| "a digest of 32 bytes");
    rows.iter()
        .map(|row| {
            Ok(PaymentRequest {
                id: EntryId::from_bytes(digest(row.get(0))?),
                fingerprint: Fingerprint::from_bytes(digest(row.get(1))?),
                order: row.get(2),
            })
        })
        .collect()
}

/// Every payment's row, by order.
pub(super) async fn rows(tx: &Transaction<'_>) -> Result<Vec<Row>, Failed> {
    let rows = tx
        .query(&format!("{ROW} ORDER BY order_id, updated_ms"), &[])
        .await?;
    Ok(rows.iter().map(row).collect())
}
