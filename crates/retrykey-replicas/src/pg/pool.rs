//! A few `tokio-postgres` connections used from async code, each reopened when it breaks.
//!
//! Every failure, whatever its cause, becomes [`Error::StoreUnavailable`]: the layer then
//! answers 503 before any handler runs (it fails closed). The connection that failed is closed
//! rather than reused, since it may sit in an aborted transaction or on a dead socket; the
//! server rolls back whatever was open on it, and the next caller opens a fresh one. So once
//! the database is back, requests work again without a restart.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use retrykey_http::Error;
use tokio::sync::{Mutex, MutexGuard};
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config, NoTls, Row, Statement};

/// What a database call returns.
pub(crate) type PgResult<T> = Result<T, tokio_postgres::Error>;

/// The work [`Pool::run`] does on one connection.
pub(crate) type Work<'c, T> = Pin<Box<dyn Future<Output = PgResult<T>> + Send + 'c>>;

/// How long one operation (a transaction, or a lookup) may take before the store gives up
/// (503). A server that stopped answering must not hold a request forever.
const OPERATION_TIMEOUT: Duration = Duration::from_secs(5);

/// How long opening a connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How many times work that failed with a serialization failure or a deadlock is tried in all.
/// Those failures mean "rolled back, nothing happened", so trying again is safe.
const MAX_ATTEMPTS: u32 = 3;

/// A few connections to one database, all with `search_path` set to one schema.
pub(crate) struct Pool {
    config: Config,
    slots: Vec<Mutex<Slot>>,
    next: AtomicUsize,
}

/// One connection of the pool, opened on first use.
#[derive(Default)]
struct Slot {
    connection: Option<Connection>,
    /// Set while work runs on the connection. Still set when the next caller arrives, it means
    /// the work never returned (its future was dropped mid-way) and may have left a
    /// transaction open or a reply unread: the connection is closed, not reused.
    busy: bool,
}

/// An open connection and the statements prepared on it.
pub(crate) struct Connection {
    client: Client,
    /// Prepared once per connection: a cached statement costs one round trip per use where
    /// an unprepared one costs two.
    statements: HashMap<&'static str, Statement>,
}

impl Pool {
    /// A pool of `size` connections to `url`, with `search_path` set to `schema`; none is
    /// opened yet.
    pub(crate) fn new(url: &str, schema: &str, size: usize) -> Result<Self, Error> {
        let mut config: Config = url
            .parse()
            .map_err(|error| Error::StoreUnavailable(format!("postgres URL: {error}")))?;
        config.application_name("retrykey-replicas");
        config.options(format!("-c search_path={schema}"));
        config.connect_timeout(CONNECT_TIMEOUT);
        Ok(Self {
            config,
            slots: (0..size.max(1)).map(|_| Mutex::default()).collect(),
            next: AtomicUsize::new(0),
        })
    }

    /// Runs `work` on one connection, opening it first if needed. Work that failed with a
    /// serialization failure or a deadlock runs again, [`MAX_ATTEMPTS`] times in all.
    pub(crate) async fn run<T, F>(&self, work: F) -> Result<T, Error>
    where
        F: for<'c> Fn(&'c mut Connection) -> Work<'c, T>,
    {
        let mut slot = self.slot().await;
        if slot.busy {
            // Dropping the client closes the socket; the server rolls back what was open.
            slot.connection = None;
        }
        slot.busy = true;
        let mut attempt = 1;
        let outcome = loop {
            if slot
                .connection
                .as_ref()
                .is_none_or(|connection| connection.client.is_closed())
            {
                slot.connection = None;
                match Connection::open(&self.config).await {
                    Ok(connection) => slot.connection = Some(connection),
                    Err(error) => break Err(error),
                }
            }
            let connection = slot.connection.as_mut().expect("just opened");
            match tokio::time::timeout(OPERATION_TIMEOUT, work(connection)).await {
                Ok(Ok(value)) => break Ok(value),
                Ok(Err(error)) => {
                    slot.connection = None;
                    if attempt < MAX_ATTEMPTS && is_transient(&error) {
                        attempt += 1;
                        continue;
                    }
                    break Err(unavailable(&error));
                }
                Err(_elapsed) => {
                    slot.connection = None;
                    break Err(Error::StoreUnavailable(format!(
                        "postgres: no answer within {OPERATION_TIMEOUT:?}"
                    )));
                }
            }
        };
        slot.busy = false;
        outcome
    }

    /// A free slot, preferring the first ones: connections are opened only as far as requests
    /// actually overlap, not all of them because a counter went round.
    async fn slot(&self) -> MutexGuard<'_, Slot> {
        for slot in &self.slots {
            if let Ok(slot) = slot.try_lock() {
                return slot;
            }
        }
        let index = self.next.fetch_add(1, Ordering::Relaxed) % self.slots.len();
        self.slots[index].lock().await
    }
}

impl Connection {
    /// Opens a connection; its driver runs as a task of the current runtime and ends when the
    /// client is dropped or the server goes away.
    pub(crate) async fn open(config: &Config) -> Result<Self, Error> {
        let connecting = tokio::time::timeout(CONNECT_TIMEOUT, config.connect(NoTls));
        let (client, connection) = match connecting.await {
            Ok(Ok(pair)) => pair,
            Ok(Err(error)) => return Err(unavailable(&error)),
            Err(_elapsed) => {
                return Err(Error::StoreUnavailable(format!(
                    "postgres: could not connect within {CONNECT_TIMEOUT:?}"
                )));
            }
        };
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "postgres connection ended");
            }
        });
        Ok(Self {
            client,
            statements: HashMap::new(),
        })
    }

    async fn prepared(&mut self, sql: &'static str) -> PgResult<Statement> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.client.prepare(sql).await?;
        self.statements.insert(sql, statement.clone());
        Ok(statement)
    }

    /// At most one row.
    pub(crate) async fn opt(
        &mut self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> PgResult<Option<Row>> {
        let statement = self.prepared(sql).await?;
        self.client.query_opt(&statement, params).await
    }

    /// Exactly one row.
    pub(crate) async fn one(
        &mut self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> PgResult<Row> {
        let statement = self.prepared(sql).await?;
        self.client.query_one(&statement, params).await
    }

    /// Every row.
    pub(crate) async fn all(
        &mut self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> PgResult<Vec<Row>> {
        let statement = self.prepared(sql).await?;
        self.client.query(&statement, params).await
    }

    /// How many rows the statement changed.
    pub(crate) async fn execute(
        &mut self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> PgResult<u64> {
        let statement = self.prepared(sql).await?;
        self.client.execute(&statement, params).await
    }

    /// `prefix` (a statement without parameters, such as `SAVEPOINT`), then `sql`, sent
    /// together: one round trip instead of two.
    pub(crate) async fn execute_after(
        &mut self,
        prefix: &str,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> PgResult<u64> {
        let statement = self.prepared(sql).await?;
        // Requests go out in the order they are first polled: `prefix` first.
        let ((), changed) = tokio::try_join!(
            self.client.batch_execute(prefix),
            self.client.execute(&statement, params)
        )?;
        Ok(changed)
    }

    /// `prefix` (a statement without parameters, such as `BEGIN`), then `sql`, sent together;
    /// at most one row of `sql`.
    pub(crate) async fn opt_after(
        &mut self,
        prefix: &str,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> PgResult<Option<Row>> {
        let statement = self.prepared(sql).await?;
        let ((), row) = tokio::try_join!(
            self.client.batch_execute(prefix),
            self.client.query_opt(&statement, params)
        )?;
        Ok(row)
    }

    /// `sql`, then `COMMIT`, sent together: the last write of a transaction and its commit in
    /// one round trip. Should `sql` fail, the server answers the `COMMIT` with a rollback.
    pub(crate) async fn execute_and_commit(
        &mut self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> PgResult<u64> {
        let statement = self.prepared(sql).await?;
        let (changed, ()) = tokio::try_join!(
            self.client.execute(&statement, params),
            self.client.batch_execute("COMMIT")
        )?;
        Ok(changed)
    }

    /// Statements without parameters or results (`BEGIN`, `COMMIT`, DDL), sent as one
    /// simple-protocol message.
    pub(crate) async fn batch(&self, sql: &str) -> PgResult<()> {
        self.client.batch_execute(sql).await
    }
}

pub(crate) fn unavailable(error: &tokio_postgres::Error) -> Error {
    Error::StoreUnavailable(format!("postgres: {error}"))
}

fn is_transient(error: &tokio_postgres::Error) -> bool {
    error.code().is_some_and(|code| {
        *code == SqlState::T_R_SERIALIZATION_FAILURE || *code == SqlState::T_R_DEADLOCK_DETECTED
    })
}
