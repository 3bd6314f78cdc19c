//! PostgreSQL: the statements the apply transaction is made of.
//!
//! The transaction itself lives in [`ledger`], one file, so that a negative variant can copy it
//! whole and change one thing; the connections it runs on come from [`pool`].

pub mod ledger;
pub mod pool;
pub mod schema;
pub mod transaction;

use retrykey::{Error, Key, Limits, Receipt, Request};
use tokio_postgres::types::Type;
use tokio_postgres::{Client, GenericClient};

use crate::SCHEMA_VERSION;
use crate::record::{State, Stored, from_sql, to_sql};

pub use ledger::PgLedger;
pub use pool::{BlockingPool, Failed, MAX_ATTEMPTS, check_identifier};

/// The environment variable that holds the connection URL, e.g.
/// `postgres://retrykey:retrykey@127.0.0.1:5432/retrykey`.
pub const URL_VAR: &str = "RETRYKEY_PG_URL";

/// The URL from [`URL_VAR`], if set and not empty.
pub fn url_from_env() -> Option<String> {
    std::env::var(URL_VAR)
        .ok()
        .filter(|url| !url.trim().is_empty())
}

/// A PostgreSQL failure as the ledger reports it: the outcome is unknown to the caller.
pub fn storage(error: tokio_postgres::Error) -> Error {
    Error::Storage(Box::new(error))
}

// Every statement below names its parameter types, so it runs in one round trip (no separate
// prepare step): the transaction's cost is its round trips and its commit.

/// The record of `key` in `scope`, if there is one.
pub async fn lookup(
    db: &impl GenericClient,
    scope: &str,
    key: &Key,
) -> Result<Option<Stored>, Error> {
    let row = db
        .query_typed_opt(
            "SELECT job, units, operation, committed_total FROM operations
             WHERE scope = $1 AND key = $2",
            &[(&scope, Type::TEXT), (&key.as_str(), Type::TEXT)],
        )
        .await
        .map_err(storage)?;
    Ok(row.map(|row| Stored {
        job: row.get(0),
        units: from_sql(row.get(1)),
        receipt: Receipt {
            operation: from_sql(row.get(2)),
            total: from_sql(row.get(3)),
            replayed: false,
        },
    }))
}

/// The ledger row of `scope`; with `lock`, locked until the transaction ends (`FOR UPDATE`),
/// which orders every new operation of the scope.
pub async fn read_state(db: &impl GenericClient, scope: &str, lock: bool) -> Result<State, Error> {
    let sql = if lock {
        "SELECT total, records, operations FROM ledger WHERE scope = $1 FOR UPDATE"
    } else {
        "SELECT total, records, operations FROM ledger WHERE scope = $1"
    };
    let row = db
        .query_typed_one(sql, &[(&scope, Type::TEXT)])
        .await
        .map_err(storage)?;
    Ok(State {
        total: from_sql(row.get(0)),
        records: from_sql(row.get(1)),
        operations: from_sql(row.get(2)),
    })
}

/// The effect of a new operation, if capacity and ceiling allow it: the total grows by
/// `units`, counted as one more operation and one more live record, and the receipt it earned
/// is returned. The statement takes the scope's ledger row (waiting for a concurrent writer of
/// the scope) and checks the limits on the row it locked, so no separate locking read is
/// needed. It writes nothing when `(scope, key)` already has a record, so it can be sent
/// together with the [`lookup`] of that key before its answer is known.
///
/// Returns `None` when it wrote nothing: the key has a record, a limit refuses the operation, a
/// value lies beyond what SQL compares correctly (stored counts are the bit patterns of
/// `u64`s), or it ran outside a transaction opened by
/// [`Transaction::begin_with`](transaction::Transaction::begin_with) (the marker condition).
/// For a new key the caller then decides exactly with [`read_state`] and [`add_effect`].
pub async fn add_effect_within_limits(
    db: &impl GenericClient,
    scope: &str,
    key: &Key,
    units: u64,
    limits: Limits,
) -> Result<Option<Receipt>, Error> {
    let Ok(units) = i64::try_from(units) else {
        return Ok(None);
    };
    let max_units = i64::try_from(limits.max_units).unwrap_or(i64::MAX);
    let max_records = i64::try_from(limits.max_records).unwrap_or(i64::MAX);
    // `total BETWEEN 0 AND $4 - $2`: no overflow, since every term is a non-negative bigint.
    let row = db
        .query_typed_opt(
            "UPDATE ledger
             SET total = total + $2, operations = operations + 1, records = records + 1
             WHERE scope = $1 AND records < $3 AND total BETWEEN 0 AND $4 - $2
               AND current_setting('retrykey.in_transaction', true) = 'yes'
               AND NOT EXISTS (SELECT FROM operations WHERE scope = $1 AND key = $5)
             RETURNING operations, total",
            &[
                (&scope, Type::TEXT),
                (&units, Type::INT8),
                (&max_records, Type::INT8),
                (&max_units, Type::INT8),
                (&key.as_str(), Type::TEXT),
            ],
        )
        .await
        .map_err(storage)?;
    Ok(row.map(|row| Receipt {
        operation: from_sql(row.get(0)),
        total: from_sql(row.get(1)),
        replayed: false,
    }))
}

/// The effect: the new total, computed by the caller from a locked [`read_state`], counted as
/// one more operation and one more live record (the one [`insert_record`] writes in the same
/// transaction). The slow path behind [`add_effect_within_limits`], for values beyond `i64` or
/// a limit that a sweeper lifted in the meantime.
pub async fn add_effect(db: &impl GenericClient, scope: &str, total: u64) -> Result<(), Error> {
    db.execute_typed(
        "UPDATE ledger SET total = $2, operations = operations + 1, records = records + 1
         WHERE scope = $1",
        &[(&scope, Type::TEXT), (&to_sql(total), Type::INT8)],
    )
    .await
    .map_err(storage)?;
    Ok(())
}

/// The record: key, request, receipt, schema version and creation time (its count is
/// [`add_effect`]'s), unless the unique index already holds one for `(scope, key)`: returns
/// whether this call inserted it. `ON CONFLICT DO NOTHING` waits for a concurrent inserter of the same
/// key to finish, then yields to it if it committed.
pub async fn insert_record(
    db: &impl GenericClient,
    scope: &str,
    key: &Key,
    request: &Request,
    receipt: Receipt,
    created_at: i64,
) -> Result<bool, Error> {
    let inserted = db
        .execute_typed(
            "INSERT INTO operations
               (scope, key, job, units, operation, committed_total, schema_version, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
             ON CONFLICT DO NOTHING",
            &[
                (&scope, Type::TEXT),
                (&key.as_str(), Type::TEXT),
                (&request.job(), Type::TEXT),
                (&to_sql(request.units()), Type::INT8),
                (&to_sql(receipt.operation), Type::INT8),
                (&to_sql(receipt.total), Type::INT8),
                (&(SCHEMA_VERSION as i32), Type::INT4),
                (&created_at, Type::INT8),
            ],
        )
        .await
        .map_err(storage)?;
    Ok(inserted == 1)
}

/// Deletes the records of `scope` created before `cutoff` (Unix seconds); returns how many.
pub async fn delete_expired(client: &mut Client, scope: &str, cutoff: i64) -> Result<usize, Error> {
    let tx = client.transaction().await.map_err(storage)?;
    // Lock the ledger row first, like apply does, so the count and the rows agree.
    read_state(&tx, scope, true).await?;
    let deleted = tx
        .execute(
            "DELETE FROM operations WHERE scope = $1 AND created_at < $2",
            &[&scope, &cutoff],
        )
        .await
        .map_err(storage)?;
    tx.execute(
        "UPDATE ledger SET records = records - $2 WHERE scope = $1",
        &[&scope, &(deleted as i64)],
    )
    .await
    .map_err(storage)?;
    tx.commit().await.map_err(storage)?;
    Ok(deleted as usize)
}

/// Deletes every row of `scope` (used by ephemeral ledgers).
pub async fn forget_scope(client: &Client, scope: &str) -> Result<(), Error> {
    for table in ["operations", "ledger"] {
        client
            .execute(&format!("DELETE FROM {table} WHERE scope = $1"), &[&scope])
            .await
            .map_err(storage)?;
    }
    Ok(())
}
