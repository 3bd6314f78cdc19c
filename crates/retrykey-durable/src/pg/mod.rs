//! PostgreSQL: the connection pool behind the synchronous facade, and the statements the apply
//! transaction is made of.
//!
//! The [`Ledger`](retrykey::Ledger) trait is synchronous. A [`Pool`] owns a small tokio runtime
//! (one worker thread, which drives the connections) and a few `tokio-postgres` clients; each
//! call blocks the calling thread on its own future. Do not call a `PgLedger` from async code:
//! use `spawn_blocking` there.

pub mod admin;
pub mod ledger;
pub mod schema;
pub mod transaction;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, PoisonError};

use retrykey::{Error, Key, Limits, Receipt, Request};
use tokio::runtime::Runtime;
use tokio::sync::Mutex;
use tokio_postgres::error::{Severity, SqlState};
use tokio_postgres::types::Type;
use tokio_postgres::{Client, Config, GenericClient, NoTls};

use crate::SCHEMA_VERSION;

pub use crate::sqlite::{State, Stored};
pub use ledger::PgLedger;

/// The environment variable that holds the connection URL, e.g.
/// `postgres://retrykey:retrykey@127.0.0.1:5432/retrykey`.
pub const URL_VAR: &str = "RETRYKEY_PG_URL";

/// How many times a transaction that failed with a serialization failure or a deadlock is tried
/// in all. Those failures mean "rolled back, nothing happened": trying again is safe.
pub const MAX_ATTEMPTS: u32 = 5;

/// The URL from [`URL_VAR`], if set and not empty.
pub fn url_from_env() -> Option<String> {
    std::env::var(URL_VAR)
        .ok()
        .filter(|url| !url.trim().is_empty())
}

/// A few connections to one database, all with `search_path` set to one schema.
pub struct Pool {
    runtime: Option<Runtime>,
    config: Config,
    slots: Vec<Mutex<Slot>>,
    next: AtomicUsize,
}

/// One connection of the pool, opened on first use.
#[derive(Default)]
struct Slot {
    client: Option<Client>,
    /// Set while work runs on the connection. Still set when the next caller arrives, it means
    /// the work never returned (it panicked, or its future was dropped) and may have left a
    /// transaction open or a reply unread: the connection is closed, not reused.
    busy: bool,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("connections", &self.slots.len())
            .finish()
    }
}

impl Pool {
    /// Prepares `size` connections to `url` whose tables live in `schema` (created if missing).
    /// The first one is opened now, so that a wrong URL fails here.
    pub fn connect(
        url: &str,
        schema: &str,
        size: usize,
        application_name: &str,
    ) -> Result<Self, crate::Error> {
        let config = config(url, schema, application_name)?;
        let runtime = runtime()?;
        let mut first = runtime.block_on(open(&runtime, &config))?;
        runtime.block_on(async {
            // Two ledgers creating the same schema at once would race in the catalog.
            let tx = first.transaction().await?;
            tx.batch_execute("SELECT pg_advisory_xact_lock(7303)")
                .await?;
            tx.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"))
                .await?;
            tx.commit().await
        })?;
        let mut slots = vec![Mutex::new(Slot {
            client: Some(first),
            busy: false,
        })];
        slots.extend((1..size.max(1)).map(|_| Mutex::new(Slot::default())));
        Ok(Self {
            runtime: Some(runtime),
            config,
            slots,
            next: AtomicUsize::new(0),
        })
    }

    /// A pool shared by every caller in this process that asks for the same URL, schema, size
    /// and name; opened on first use and kept for the life of the process. Short-lived ledgers
    /// (tests, ephemeral scopes) use it so that they do not pay for a new login each time.
    pub fn shared(
        url: &str,
        schema: &str,
        size: usize,
        application_name: &str,
    ) -> Result<Arc<Self>, crate::Error> {
        type Pools = std::sync::Mutex<HashMap<String, Arc<Pool>>>;
        static POOLS: OnceLock<Pools> = OnceLock::new();
        let id = format!("{url}\n{schema}\n{size}\n{application_name}");
        let pools = POOLS.get_or_init(Pools::default);
        let mut pools = pools.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(pool) = pools.get(&id) {
            return Ok(Arc::clone(pool));
        }
        let pool = Arc::new(Self::connect(url, schema, size, application_name)?);
        pools.insert(id, Arc::clone(&pool));
        Ok(pool)
    }

    /// Runs `work` on one connection, blocking the calling thread. Work that failed with a
    /// serialization failure or a deadlock is run again, [`MAX_ATTEMPTS`] times in all; a
    /// connection found closed, or left behind by work that never returned, is replaced first.
    pub fn run<T>(
        &self,
        mut work: impl AsyncFnMut(&mut Client) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let slot = &self.slots[self.next.fetch_add(1, Ordering::Relaxed) % self.slots.len()];
        let runtime = self
            .runtime
            .as_ref()
            .expect("the runtime lives as long as the pool");
        runtime.block_on(async {
            let mut slot = slot.lock().await;
            if slot.busy {
                // Dropping the client closes the socket; the server rolls back what was open.
                slot.client = None;
            }
            slot.busy = true;
            let mut attempt = 1;
            let outcome = loop {
                if slot.client.as_ref().is_none_or(Client::is_closed) {
                    match open(runtime, &self.config).await {
                        Ok(client) => slot.client = Some(client),
                        Err(error) => break Err(storage(error)),
                    }
                }
                let client = slot.client.as_mut().expect("just connected");
                match work(client).await {
                    Err(Error::Storage(cause))
                        if attempt < MAX_ATTEMPTS && is_transient(cause.as_ref()) =>
                    {
                        attempt += 1;
                    }
                    Err(Error::Storage(cause)) => {
                        if is_broken(cause.as_ref()) {
                            // The server may have said FATAL before the socket closed: do not
                            // wait to notice the close, connect afresh next time.
                            slot.client = None;
                        }
                        break Err(Error::Storage(cause));
                    }
                    other => break other,
                }
            };
            slot.busy = false;
            outcome
        })
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            // Safe to drop anywhere, even inside another runtime.
            runtime.shutdown_background();
        }
    }
}

/// The settings of the lab's connections: `url`, named `application_name`, with `search_path`
/// set to `schema`.
pub(crate) fn config(
    url: &str,
    schema: &str,
    application_name: &str,
) -> Result<Config, crate::Error> {
    check_identifier(schema)?;
    let mut config: Config = url.parse()?;
    config.application_name(application_name);
    config.options(format!("-c search_path={schema}"));
    Ok(config)
}

/// A current-thread runtime: the caller's thread drives its own connection inside `block_on`,
/// with no hop to a worker thread and back on every round trip.
pub(crate) fn runtime() -> Result<Runtime, crate::Error> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

pub(crate) async fn open(
    runtime: &Runtime,
    config: &Config,
) -> Result<Client, tokio_postgres::Error> {
    let (client, connection) = config.connect(NoTls).await?;
    // The connection task ends when the client is dropped or the server goes away.
    runtime.spawn(connection);
    Ok(client)
}

/// Accepts lower-case SQL identifiers only, so a schema name can be written into DDL.
pub fn check_identifier(name: &str) -> Result<(), crate::Error> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_');
    let rest_ok = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if first_ok && rest_ok && name.len() <= 63 {
        Ok(())
    } else {
        Err(crate::Error::Config(format!(
            "{name:?} is not a schema name (lower-case letters, digits, _; at most 63 bytes)"
        )))
    }
}

fn is_transient(cause: &(dyn std::error::Error + 'static)) -> bool {
    cause
        .downcast_ref::<tokio_postgres::Error>()
        .and_then(tokio_postgres::Error::code)
        .is_some_and(|code| {
            *code == SqlState::T_R_SERIALIZATION_FAILURE || *code == SqlState::T_R_DEADLOCK_DETECTED
        })
}

/// Whether `cause` leaves the connection unusable: anything but an ordinary error reported by
/// the server (a closed socket, an I/O failure, a FATAL or PANIC message).
fn is_broken(cause: &(dyn std::error::Error + 'static)) -> bool {
    let Some(error) = cause.downcast_ref::<tokio_postgres::Error>() else {
        return false;
    };
    match error.as_db_error().and_then(|db| db.parsed_severity()) {
        Some(Severity::Fatal | Severity::Panic) => true,
        Some(_) => false,
        None => error.as_db_error().is_none(),
    }
}

/// A PostgreSQL failure as the ledger reports it: the outcome is unknown to the caller.
pub fn storage(error: tokio_postgres::Error) -> Error {
    Error::Storage(Box::new(error))
}

// bigint is signed; unsigned counts are stored as their bit pattern and round-trip exactly.
fn to_sql(value: u64) -> i64 {
    value as i64
}

fn from_sql(value: i64) -> u64 {
    value as u64
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

/// The effect with a total computed by the caller from a locked [`read_state`]: the slow path
/// behind [`add_effect_within_limits`], for values beyond `i64` or a limit that a sweeper
/// lifted in the meantime.
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

/// The record, unless the unique index already holds one for `(scope, key)`: returns whether
/// this call inserted it. `ON CONFLICT DO NOTHING` waits for a concurrent inserter of the same
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
