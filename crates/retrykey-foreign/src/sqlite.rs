// Mirrored by labs/phase-outside-transaction: see labs/README.md before changing this file.
//! The checkout's rows on SQLite, in the same file as the key's store, each phase one of its
//! fenced transactions.

use std::sync::Arc;
use std::time::Duration;

use retrykey_http::{Entries, EntryId, Reservation, StoredResponse};
use retrykey_replicas::SqliteEntries;
use retrykey_replicas::rusqlite::{self, OptionalExtension, Transaction, params};

use crate::crash::{Hooks, Point as Crash};
use crate::{
    Books, BooksError, BooksFuture, End, Order, Point, Progress, Purchase, before, now_ms,
};

/// The checkout's tables, beside the store's own: the orders, one row per operation with the
/// recovery point it reached, and the shipments of paid orders.
const TABLES: &str = "CREATE TABLE IF NOT EXISTS orders (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    amount INTEGER NOT NULL,
    status TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS checkouts (
    entry_id    BLOB PRIMARY KEY,
    fingerprint BLOB NOT NULL,
    order_id    INTEGER NOT NULL REFERENCES orders (id),
    amount      INTEGER NOT NULL,
    point       TEXT NOT NULL,
    charge      INTEGER,
    updated_ms  INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS checkouts_by_point ON checkouts (point, updated_ms);
CREATE TABLE IF NOT EXISTS shipments (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id INTEGER NOT NULL REFERENCES orders (id)
)";

/// The checkout's rows in the SQLite file of `store`.
#[derive(Clone, Debug)]
pub struct SqliteBooks {
    store: SqliteEntries,
    hooks: Hooks,
}

impl SqliteBooks {
    /// The books in `store`'s file, running `hooks` after each phase; creates the tables.
    pub async fn open(store: SqliteEntries, hooks: Hooks) -> Result<Self, BooksError> {
        store
            .commit(None, |tx| {
                tx.execute_batch(TABLES)?;
                Ok::<_, rusqlite::Error>(retrykey_replicas::Effect::new((), nothing()))
            })
            .await?;
        Ok(Self { store, hooks })
    }

    /// Runs `read` in a transaction of its own, outside any key.
    async fn read<T: Send + 'static>(
        &self,
        read: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, BooksError> {
        let effect = self
            .store
            .commit(None, move |tx| {
                read(tx).map(|value| retrykey_replicas::Effect::new(value, nothing()))
            })
            .await?;
        Ok(effect.value)
    }
}

impl Books for SqliteBooks {
    fn entries(&self) -> Arc<dyn Entries> {
        Arc::new(self.store.clone())
    }

    // ANCHOR: start
    fn start(&self, fence: Reservation, purchase: Purchase) -> BooksFuture<'_, Progress> {
        Box::pin(async move {
            let started = self
                .store
                .phase(fence, move |tx| {
                    if let Some((progress, fingerprint)) = progress_of(tx, &purchase.id)? {
                        // A row another request under this key began is not this one's.
                        let mine = fingerprint == purchase.fingerprint.as_bytes();
                        return Ok(mine.then_some(progress));
                    }
                    let order = insert_order(tx, purchase.amount)?;
                    tx.execute(
                        "INSERT INTO checkouts
                           (entry_id, fingerprint, order_id, amount, point, updated_ms)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                        params![
                            purchase.id.as_bytes(),
                            purchase.fingerprint.as_bytes(),
                            order,
                            purchase.amount,
                            Point::OrderCreated.name(),
                            now_ms()
                        ],
                    )?;
                    Ok::<_, rusqlite::Error>(Some(Progress {
                        order,
                        amount: purchase.amount,
                        point: Point::OrderCreated,
                        charge: None,
                    }))
                })
                .await?;
            let progress = started.ok_or(BooksError::Reused)?;
            self.hooks.at(Crash::OrderCreated);
            Ok(progress)
        })
    }
    // ANCHOR_END: start

    fn charged(&self, fence: Reservation, operation: EntryId, charge: i64) -> BooksFuture<'_, ()> {
        Box::pin(async move {
            self.store
                .phase(fence, move |tx| {
                    tx.execute(
                        "UPDATE checkouts SET point = ?2, charge = ?3, updated_ms = ?4
                         WHERE entry_id = ?1",
                        params![
                            operation.as_bytes(),
                            Point::Charged.name(),
                            charge,
                            now_ms()
                        ],
                    )
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
            let effect = self
                .store
                .commit(Some(fence), move |tx| {
                    let answer = match end {
                        End::Paid(answer) => {
                            tx.execute("UPDATE orders SET status = 'paid' WHERE id = ?1", [order])?;
                            tx.execute("INSERT INTO shipments (order_id) VALUES (?1)", [order])?;
                            answer
                        }
                        End::Declined(answer) => {
                            tx.execute(
                                "UPDATE orders SET status = 'declined' WHERE id = ?1",
                                [order],
                            )?;
                            answer
                        }
                    };
                    tx.execute(
                        "UPDATE checkouts SET point = ?2, updated_ms = ?3 WHERE entry_id = ?1",
                        params![operation.as_bytes(), Point::Finished.name(), now_ms()],
                    )?;
                    Ok::<_, rusqlite::Error>(retrykey_replicas::Effect::new((), answer))
                })
                .await?;
            self.hooks.at(Crash::Confirmed);
            Ok(effect.answer)
        })
    }

    fn stalled(&self, idle: Duration, limit: usize) -> BooksFuture<'_, Vec<Purchase>> {
        let (cutoff, limit) = (before(idle), i64::try_from(limit).unwrap_or(i64::MAX));
        Box::pin(self.read(move |tx| {
            let mut statement = tx.prepare(
                "SELECT entry_id, fingerprint, amount FROM checkouts
                 WHERE point <> 'finished' AND updated_ms <= ?1
                 ORDER BY updated_ms LIMIT ?2",
            )?;
            let rows = statement.query_map(params![cutoff, limit], |row| {
                Ok(Purchase {
                    id: retrykey_http::EntryId::from_bytes(row.get(0)?),
                    fingerprint: retrykey_http::Fingerprint::from_bytes(row.get(1)?),
                    amount: row.get(2)?,
                })
            })?;
            rows.collect()
        }))
    }

    fn reap(&self, retention: Duration, limit: usize) -> BooksFuture<'_, usize> {
        let (cutoff, limit) = (before(retention), i64::try_from(limit).unwrap_or(i64::MAX));
        Box::pin(self.read(move |tx| {
            tx.execute(
                "DELETE FROM checkouts WHERE entry_id IN (
                     SELECT entry_id FROM checkouts
                     WHERE point = 'finished' AND updated_ms <= ?1
                     ORDER BY updated_ms LIMIT ?2)",
                params![cutoff, limit],
            )
        }))
    }

    fn orders(&self) -> BooksFuture<'_, Vec<Order>> {
        Box::pin(self.read(|tx| {
            let mut statement = tx.prepare(
                "SELECT id, amount, status,
                        (SELECT count(*) FROM shipments WHERE order_id = orders.id)
                 FROM orders ORDER BY id",
            )?;
            let rows = statement.query_map([], |row| {
                Ok(Order {
                    order: row.get(0)?,
                    amount: row.get(1)?,
                    status: row.get(2)?,
                    shipments: row.get(3)?,
                })
            })?;
            rows.collect()
        }))
    }
}

/// A pending order of `amount`; returns its number.
fn insert_order(tx: &Transaction<'_>, amount: i64) -> rusqlite::Result<i64> {
    tx.execute(
        "INSERT INTO orders (amount, status) VALUES (?1, 'pending')",
        [amount],
    )?;
    Ok(tx.last_insert_rowid())
}

/// The operation's row in `tx`, if an earlier attempt wrote it, with the fingerprint of the
/// request that began it.
fn progress_of(
    tx: &Transaction<'_>,
    id: &EntryId,
) -> rusqlite::Result<Option<(Progress, Vec<u8>)>> {
    tx.prepare_cached(
        "SELECT order_id, amount, point, charge, fingerprint FROM checkouts WHERE entry_id = ?1",
    )?
    .query_row([id.as_bytes().as_slice()], |row| {
        let name: String = row.get(2)?;
        let point = Point::parse(&name).ok_or_else(|| {
            let unknown = format!("unknown recovery point {name:?}");
            rusqlite::Error::FromSqlConversionFailure(
                2,
                rusqlite::types::Type::Text,
                unknown.into(),
            )
        })?;
        let progress = Progress {
            order: row.get(0)?,
            amount: row.get(1)?,
            point,
            charge: row.get(3)?,
        };
        Ok((progress, row.get(4)?))
    })
    .optional()
}

/// The answer a commit without a key keeps: none is stored, so any will do.
fn nothing() -> StoredResponse {
    StoredResponse::new(http::StatusCode::NO_CONTENT, &http::HeaderMap::new(), b"")
}
