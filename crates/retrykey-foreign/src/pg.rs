//! The checkout's rows on PostgreSQL, in the key's store's schema, each phase one of its
//! fenced transactions. The same rows and phases as [`SqliteBooks`](crate::SqliteBooks).

use std::sync::Arc;
use std::time::Duration;

use retrykey_http::{Entries, EntryId, Fingerprint, Reservation, StoredResponse};
use retrykey_replicas::tokio_postgres::{self, Row, Transaction};
use retrykey_replicas::{Effect, PgEntries};

use crate::crash::{Hooks, Point as Crash};
use crate::{
    Books, BooksError, BooksFuture, End, Order, Point, Progress, Purchase, before, now_ms,
};

/// What a phase's work fails with: the database's error, or a row this code cannot read.
type Failed = Box<dyn std::error::Error + Send + Sync>;

/// The checkout's tables: as on SQLite.
const TABLES: &str = "CREATE TABLE IF NOT EXISTS orders (
    id     BIGSERIAL PRIMARY KEY,
    amount BIGINT NOT NULL,
    status TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS checkouts (
    entry_id    BYTEA PRIMARY KEY,
    fingerprint BYTEA NOT NULL,
    order_id    BIGINT NOT NULL REFERENCES orders (id),
    amount      BIGINT NOT NULL,
    point       TEXT NOT NULL,
    charge      BIGINT,
    updated_ms  BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS checkouts_by_point ON checkouts (point, updated_ms);
CREATE TABLE IF NOT EXISTS shipments (
    id       BIGSERIAL PRIMARY KEY,
    order_id BIGINT NOT NULL REFERENCES orders (id)
)";

/// The checkout's rows in the database (and schema) of `store`.
#[derive(Clone, Debug)]
pub struct PgBooks {
    store: PgEntries,
    hooks: Hooks,
}

impl PgBooks {
    /// The books beside `store`'s keys, running `hooks` after each phase; creates the tables.
    pub async fn open(store: PgEntries, hooks: Hooks) -> Result<Self, BooksError> {
        store
            .commit(None, |tx| {
                Box::pin(async move {
                    tx.batch_execute(TABLES).await?;
                    Ok::<_, tokio_postgres::Error>(Effect::new((), nothing()))
                })
            })
            .await?;
        Ok(Self { store, hooks })
    }
}

impl Books for PgBooks {
    fn entries(&self) -> Arc<dyn Entries> {
        Arc::new(self.store.clone())
    }

    fn start(&self, fence: Reservation, purchase: Purchase) -> BooksFuture<'_, Progress> {
        Box::pin(async move {
            let progress = self
                .store
                .phase(fence, move |tx| {
                    Box::pin(async move {
                        if let Some((progress, fingerprint)) = progress_of(tx, &purchase.id).await?
                        {
                            // A row another request under this key began is not this one's.
                            let mine = fingerprint == purchase.fingerprint.as_bytes();
                            return Ok(mine.then_some(progress));
                        }
                        let order: i64 = tx
                            .query_one(
                                "INSERT INTO orders (amount, status) VALUES ($1, 'pending')
                                 RETURNING id",
                                &[&purchase.amount],
                            )
                            .await?
                            .get(0);
                        tx.execute(
                            "INSERT INTO checkouts
                               (entry_id, fingerprint, order_id, amount, point, updated_ms)
                             VALUES ($1, $2, $3, $4, $5, $6)",
                            &[
                                &purchase.id.as_bytes().as_slice(),
                                &purchase.fingerprint.as_bytes().as_slice(),
                                &order,
                                &purchase.amount,
                                &Point::OrderCreated.name(),
                                &now_ms(),
                            ],
                        )
                        .await?;
                        Ok::<_, Failed>(Some(Progress {
                            order,
                            amount: purchase.amount,
                            point: Point::OrderCreated,
                            charge: None,
                        }))
                    })
                })
                .await?
                .ok_or(BooksError::Reused)?;
            self.hooks.at(Crash::OrderCreated);
            Ok(progress)
        })
    }

    fn charged(&self, fence: Reservation, operation: EntryId, charge: i64) -> BooksFuture<'_, ()> {
        Box::pin(async move {
            self.store
                .phase(fence, move |tx| {
                    Box::pin(async move {
                        tx.execute(
                            "UPDATE checkouts SET point = $2, charge = $3, updated_ms = $4
                             WHERE entry_id = $1",
                            &[
                                &operation.as_bytes().as_slice(),
                                &Point::Charged.name(),
                                &charge,
                                &now_ms(),
                            ],
                        )
                        .await
                    })
                })
                .await?;
            self.hooks.at(Crash::Charged);
            Ok(())
        })
    }

    fn finish(
        &self,
        fence: Reservation,
        operation: EntryId,
        order: i64,
        end: End,
    ) -> BooksFuture<'_, StoredResponse> {
        Box::pin(async move {
            let effect =
                self.store
                    .commit(Some(fence), move |tx| {
                        Box::pin(async move {
                            let answer = match end {
                                End::Paid(answer) => {
                                    tx.execute(
                                        "UPDATE orders SET status = 'paid' WHERE id = $1",
                                        &[&order],
                                    )
                                    .await?;
                                    tx.execute(
                                        "INSERT INTO shipments (order_id) VALUES ($1)",
                                        &[&order],
                                    )
                                    .await?;
                                    answer
                                }
                                End::Declined(answer) => {
                                    tx.execute(
                                        "UPDATE orders SET status = 'declined' WHERE id = $1",
                                        &[&order],
                                    )
                                    .await?;
                                    answer
                                }
                            };
                            tx.execute(
                            "UPDATE checkouts SET point = $2, updated_ms = $3 WHERE entry_id = $1",
                            &[&operation.as_bytes().as_slice(), &Point::Finished.name(), &now_ms()],
                        )
                        .await?;
                            Ok::<_, tokio_postgres::Error>(Effect::new((), answer))
                        })
                    })
                    .await?;
            self.hooks.at(Crash::Confirmed);
            Ok(effect.answer)
        })
    }

    fn stalled(&self, idle: Duration, limit: usize) -> BooksFuture<'_, Vec<Purchase>> {
        let (cutoff, limit) = (before(idle), i64::try_from(limit).unwrap_or(i64::MAX));
        Box::pin(async move {
            let effect = self
                .store
                .commit(None, move |tx| {
                    Box::pin(async move {
                        let rows = tx
                            .query(
                                "SELECT entry_id, fingerprint, amount FROM checkouts
                                 WHERE point <> 'finished' AND updated_ms <= $1
                                 ORDER BY updated_ms LIMIT $2",
                                &[&cutoff, &limit],
                            )
                            .await?;
                        let operations = rows
                            .iter()
                            .map(operation_of)
                            .collect::<Result<Vec<_>, _>>()?;
                        Ok::<_, Failed>(Effect::new(operations, nothing()))
                    })
                })
                .await?;
            Ok(effect.value)
        })
    }

    fn reap(&self, retention: Duration, limit: usize) -> BooksFuture<'_, usize> {
        let (cutoff, limit) = (before(retention), i64::try_from(limit).unwrap_or(i64::MAX));
        Box::pin(async move {
            let effect = self
                .store
                .commit(None, move |tx| {
                    Box::pin(async move {
                        let gone = tx
                            .execute(
                                "DELETE FROM checkouts WHERE entry_id IN (
                                     SELECT entry_id FROM checkouts
                                     WHERE point = 'finished' AND updated_ms <= $1
                                     ORDER BY updated_ms LIMIT $2)",
                                &[&cutoff, &limit],
                            )
                            .await?;
                        let gone = usize::try_from(gone).unwrap_or(usize::MAX);
                        Ok::<_, tokio_postgres::Error>(Effect::new(gone, nothing()))
                    })
                })
                .await?;
            Ok(effect.value)
        })
    }

    fn orders(&self) -> BooksFuture<'_, Vec<Order>> {
        Box::pin(async move {
            let effect = self
                .store
                .commit(None, |tx| {
                    Box::pin(async move {
                        let rows = tx
                            .query(
                                "SELECT id, amount, status,
                                        (SELECT count(*) FROM shipments WHERE order_id = orders.id)
                                 FROM orders ORDER BY id",
                                &[],
                            )
                            .await?;
                        let orders = (rows.iter())
                            .map(|row| Order {
                                order: row.get(0),
                                amount: row.get(1),
                                status: row.get(2),
                                shipments: row.get(3),
                            })
                            .collect::<Vec<_>>();
                        Ok::<_, tokio_postgres::Error>(Effect::new(orders, nothing()))
                    })
                })
                .await?;
            Ok(effect.value)
        })
    }
}

/// The operation's row in `tx`, if an earlier attempt wrote it. A row naming a point this code
/// does not know is an error, never a guess.
/// The operation's row, if an earlier attempt wrote it, with the fingerprint of the request
/// that began it.
async fn progress_of(
    tx: &Transaction<'_>,
    id: &EntryId,
) -> Result<Option<(Progress, Vec<u8>)>, Failed> {
    let row = tx
        .query_opt(
            "SELECT order_id, amount, point, charge, fingerprint FROM checkouts
             WHERE entry_id = $1",
            &[&id.as_bytes().as_slice()],
        )
        .await?;
    let Some(row) = row else { return Ok(None) };
    let name: String = row.get(2);
    let point = Point::parse(&name).ok_or(format!("unknown recovery point {name:?}"))?;
    let progress = Progress {
        order: row.get(0),
        amount: row.get(1),
        point,
        charge: row.get(3),
    };
    Ok(Some((progress, row.get(4))))
}

/// A stalled operation read back.
fn operation_of(row: &Row) -> Result<Purchase, Failed> {
    let (id, fingerprint): (Vec<u8>, Vec<u8>) = (row.get(0), row.get(1));
    let digest = |bytes: Vec<u8>| <[u8; 32]>::try_from(bytes).map_err(|_| "a digest of 32 bytes");
    Ok(Purchase {
        id: EntryId::from_bytes(digest(id)?),
        fingerprint: Fingerprint::from_bytes(digest(fingerprint)?),
        amount: row.get(2),
    })
}

/// The answer a commit without a key keeps: none is stored, so any will do.
fn nothing() -> StoredResponse {
    StoredResponse::new(http::StatusCode::NO_CONTENT, &http::HeaderMap::new(), b"")
}
