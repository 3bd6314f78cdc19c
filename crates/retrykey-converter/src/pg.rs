//! The dedup transaction on PostgreSQL, for consumers on several machines.
//!
//! Here the `processed` row is written *first*: `INSERT ... ON CONFLICT DO NOTHING` on its
//! primary key. The first delivery of an event inserts it and goes on to convert; a concurrent
//! duplicate's insert waits on that key until the first commits (or rolls back), then finds the
//! row and answers from it. The unique index, not a lookup, decides who converts, as in the
//! Stage 5 ledger. Whatever fails before the commit leaves neither row.

use std::sync::Arc;

use retrykey_durable::pg::transaction::Transaction;
use retrykey_durable::pg::{BlockingPool, Failed, storage};
use retrykey_pg::{Connection, Settings};
use tokio_postgres::Client;
use tokio_postgres::types::{ToSql, Type};

use crate::rows::{ConversionRow, Converted, ProcessedRow, unix_ms};
use retrykey_wire::ConversionRequest;

use crate::Error;

/// The schema a consumer's tables live in unless told otherwise.
pub const DEFAULT_SCHEMA: &str = "retrykey_converter";

/// How many connections one consumer process keeps open: one per delivery a dispatcher makes
/// at once, by default.
pub const CONNECTIONS: usize = 16;

/// The two tables, as on SQLite. `processed.conversion` is empty only inside the transaction
/// that writes it.
const LAYOUT: &str = "
CREATE TABLE IF NOT EXISTS conversions (
    number BIGSERIAL PRIMARY KEY,
    event_id TEXT NOT NULL,
    job TEXT NOT NULL,
    units BIGINT NOT NULL,
    converted_at BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS processed (
    event_id TEXT PRIMARY KEY,
    conversion BIGINT
);
";

/// The consumer's tables in one PostgreSQL schema.
#[derive(Debug)]
pub struct PgConverter {
    /// For the synchronous calls (the operator's tools, tests): blocks on a runtime of its own.
    pool: Arc<BlockingPool>,
    /// For the service, which awaits it on its own runtime: no thread blocked per delivery.
    /// Its connections open on first use, on that runtime.
    serving: Box<retrykey_pg::Pool>,
}

impl PgConverter {
    /// Connects to `url` and creates the tables in `schema` if they are missing. Blocks.
    pub fn connect(url: &str, schema: &str) -> Result<Self, Error> {
        let pool = BlockingPool::connect(url, schema, CONNECTIONS, "retrykey-converter")?;
        pool.run(async |client| {
            // Two consumers starting at once would race in the catalog: take turns.
            let tx = client.transaction().await.map_err(storage)?;
            tx.batch_execute("SELECT pg_advisory_xact_lock(7304)")
                .await
                .map_err(storage)?;
            tx.batch_execute(LAYOUT).await.map_err(storage)?;
            tx.commit().await.map_err(storage)
        })?;
        let config = retrykey_pg::config(url, schema, "retrykey-converter")
            .map_err(retrykey_durable::Error::from)?;
        Ok(Self {
            pool: Arc::new(pool),
            serving: Box::new(retrykey_pg::Pool::new(config, Settings::new(CONNECTIONS))),
        })
    }

    /// Runs the dedup transaction for `request` and commits it.
    pub fn convert(&self, request: &ConversionRequest) -> Result<Converted, Error> {
        Ok(self
            .pool
            .run_prepared(async |connection| convert(connection, request, unix_ms()).await)?)
    }

    /// The same, awaited on the caller's runtime: what the service runs per delivery.
    pub async fn convert_async(&self, request: &ConversionRequest) -> Result<Converted, Error> {
        let converted = self
            .serving
            .run(|connection| {
                // Owned by the attempt: the pool's work may not borrow from its caller.
                let request = request.clone();
                Box::pin(async move {
                    convert(connection, &request, unix_ms())
                        .await
                        .map_err(Failed)
                })
            })
            .await;
        Ok(converted
            .map_err(unavailable)?
            .map_err(|Failed(error)| error)?)
    }

    /// How many conversions are stored.
    pub fn count(&self) -> Result<u64, Error> {
        Ok(self
            .pool
            .run(async |client| count(client).await.map_err(storage))?)
    }

    /// The same, awaited on the caller's runtime.
    pub async fn count_async(&self) -> Result<u64, Error> {
        let counted = self
            .serving
            .run(|connection| Box::pin(async move { count(connection.client()).await }))
            .await;
        counted
            .map_err(unavailable)?
            .map_err(|error| Error::Postgres(Box::new(error)))
    }

    /// Every conversion, by number.
    pub fn list(&self) -> Result<Vec<ConversionRow>, Error> {
        Ok(self.pool.run(async |client| {
            let rows = client
                .query(
                    "SELECT number, event_id, job, units, converted_at FROM conversions
                     ORDER BY number",
                    &[],
                )
                .await
                .map_err(storage)?;
            Ok(rows
                .iter()
                .map(|row| ConversionRow {
                    number: row.get::<_, i64>(0).cast_unsigned(),
                    event: row.get(1),
                    job: row.get(2),
                    units: row.get::<_, i64>(3).cast_unsigned(),
                    converted_at_ms: row.get(4),
                })
                .collect())
        })?)
    }

    /// The `processed` records of `events` that exist, with when each was converted.
    pub fn processed(&self, events: &[String]) -> Result<Vec<ProcessedRow>, Error> {
        Ok(self.pool.run(async |client| {
            let rows = client
                .query_typed(
                    "SELECT p.event_id, p.conversion, c.converted_at
                     FROM processed p JOIN conversions c ON c.number = p.conversion
                     WHERE p.event_id = ANY($1) ORDER BY p.event_id",
                    &[(&events, Type::TEXT_ARRAY)],
                )
                .await
                .map_err(storage)?;
            Ok(rows
                .iter()
                .map(|row| ProcessedRow {
                    event: row.get(0),
                    conversion: row.get::<_, i64>(1).cast_unsigned(),
                    converted_at_ms: row.get(2),
                })
                .collect())
        })?)
    }
}

/// The pool's own failure (no connection, or no answer in time), as the consumer reports it.
fn unavailable(error: retrykey_pg::Error) -> Error {
    match error {
        retrykey_pg::Error::Postgres(error) => Error::Postgres(Box::new(error)),
        other => Error::Postgres(Box::new(other)),
    }
}

async fn count(client: &Client) -> Result<u64, tokio_postgres::Error> {
    let row = client
        .query_one("SELECT count(*) FROM conversions", &[])
        .await?;
    Ok(row.get::<_, i64>(0).cast_unsigned())
}

/// The record of a delivery, unless the event has one; sent together with `BEGIN`, so it
/// writes only inside the transaction (the marker of [`Transaction::begin_with`]).
const RECORD: &str = "INSERT INTO processed (event_id)
                      SELECT $1 WHERE current_setting('retrykey.in_transaction', true) = 'yes'
                      ON CONFLICT (event_id) DO NOTHING";

/// The effect, and its number written into the record, in one statement.
const EFFECT: &str = "WITH effect AS (
                          INSERT INTO conversions (event_id, job, units, converted_at)
                          VALUES ($1, $2, $3, $4) RETURNING number
                      )
                      UPDATE processed SET conversion = effect.number FROM effect
                      WHERE event_id = $1 RETURNING processed.conversion";

/// What the first delivery of an event answered.
const FIRST_ANSWER: &str = "SELECT conversion FROM processed WHERE event_id = $1";

/// The transaction itself: the record first, so that the unique index picks the one delivery
/// that converts. Two round trips: `BEGIN` with the record, then the effect with `COMMIT`
/// (or the first answer with `ROLLBACK`). A failed effect aborts the transaction, and the
/// `COMMIT` behind it then rolls back.
async fn convert(
    connection: &mut Connection,
    request: &ConversionRequest,
    now_ms: i64,
) -> Result<Converted, retrykey::Error> {
    let record = connection.prepared(RECORD).await.map_err(storage)?;
    let effect = connection.prepared(EFFECT).await.map_err(storage)?;
    let first_answer = connection.prepared(FIRST_ANSWER).await.map_err(storage)?;
    let client = connection.client();
    let (tx, recorded) = Transaction::begin_with(client, async {
        client
            .execute(&record, &[&request.event])
            .await
            .map_err(storage)
    })
    .await?;
    if recorded == 0 {
        // A redelivery (or a duplicate that waited for the first to commit): answer what the
        // first delivery answered, and write nothing.
        let params: [&(dyn ToSql + Sync); 1] = [&request.event];
        let (row, ended) = tokio::join!(
            biased;
            client.query_one(&first_answer, &params),
            tx.rollback(),
        );
        ended?;
        let row = row.map_err(storage)?;
        return Ok(Converted {
            conversion: row.get::<_, i64>(0).cast_unsigned(),
            replayed: true,
        });
    }
    let units = request.units.cast_signed();
    let params: [&(dyn ToSql + Sync); 4] = [&request.event, &request.job, &units, &now_ms];
    let (row, committed) = tokio::join!(
        biased;
        client.query_one(&effect, &params),
        tx.commit(),
    );
    // The effect's failure first: the COMMIT behind it only rolled back.
    let number: i64 = row.map_err(storage)?.get(0);
    committed?;
    Ok(Converted {
        conversion: number.cast_unsigned(),
        replayed: false,
    })
}
