//! The slots, the retry of transient failures, and the reconnect of broken connections.
//!
//! A connection that failed, or that work left behind without returning, is closed rather than
//! reused: it may sit in an aborted transaction or on a dead socket. The server rolls back what
//! was open on it, and the next caller opens a fresh one, so once the database is back, work
//! runs again without a restart.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{Mutex, MutexGuard};
use tokio_postgres::Config;
use tokio_postgres::error::{Severity, SqlState};

use crate::{CONNECT_TIMEOUT, Connection, Error};

/// How many times work that failed with a serialization failure or a deadlock is tried in all.
/// Those failures mean "rolled back, nothing happened": trying again is safe.
pub const MAX_ATTEMPTS: u32 = 5;

/// The work [`Pool::run`] does on one connection: a boxed future, so that it can be `Send`
/// for every lifetime of the connection it borrows.
pub type Work<'c, T, E> = Pin<Box<dyn Future<Output = Result<T, E>> + Send + 'c>>;

/// The database error inside a work's failure, if there is one: what the pool reads to decide
/// whether to try again and whether the connection is still usable.
pub trait WorkFailure {
    /// The `tokio-postgres` error behind this failure; `None` for a failure of the caller's own
    /// (a refused request), which says nothing about the connection.
    fn postgres(&self) -> Option<&tokio_postgres::Error>;
}

impl WorkFailure for tokio_postgres::Error {
    fn postgres(&self) -> Option<&tokio_postgres::Error> {
        Some(self)
    }
}

/// What a caller chooses about its pool; the retry policy itself is not a choice.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// How many connections at most (at least one).
    pub size: usize,
    /// How long one attempt of the work may take before the pool gives up on it and closes its
    /// connection; `None` waits as long as the server takes.
    pub operation_timeout: Option<Duration>,
    /// Close the connection after any failure of the work, not only after a broken
    /// connection: for work that sends its own `BEGIN` and does not roll back when a statement
    /// fails, which leaves the connection inside an aborted transaction.
    pub close_after_failure: bool,
    /// Hand the free slots out in turn instead of preferring the first free one. Every
    /// connection is then opened early and kept warm, so callers that arrive together find open
    /// connections and really run side by side (the races the durable ledger's checks and
    /// labs provoke); the cost is a login per slot even when callers never overlap. A caller
    /// never waits for a busy slot while another is free.
    pub in_turn: bool,
}

impl Settings {
    /// `size` connections, no operation timeout, connections kept after ordinary failures,
    /// the first free slot preferred.
    pub fn new(size: usize) -> Self {
        Self {
            size,
            operation_timeout: None,
            close_after_failure: false,
            in_turn: false,
        }
    }
}

/// A few connections to one database, all with the settings of one [`config`].
pub struct Pool {
    config: Config,
    settings: Settings,
    slots: Vec<Mutex<Slot>>,
    next: AtomicUsize,
}

/// One connection of the pool, opened on first use.
#[derive(Default)]
struct Slot {
    connection: Option<Connection>,
    /// Set while work runs on the connection. Still set when its lease ends, or when the next
    /// caller arrives (a lease that was leaked, never dropped), it means the work never
    /// returned (it panicked, or its future was dropped) and may have left a transaction open
    /// or a reply unread: the connection is closed, not reused.
    busy: bool,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("connections", &self.slots.len())
            .field("settings", &self.settings)
            .finish()
    }
}

/// A slot held by one caller for one [`Pool::run`], across the attempts of its work.
struct Lease<'p> {
    slot: MutexGuard<'p, Slot>,
    config: &'p Config,
    settings: Settings,
    attempt: u32,
}

impl Pool {
    /// A pool of `settings.size` connections with `config`; none is opened yet.
    pub fn new(config: Config, settings: Settings) -> Self {
        Self {
            config,
            settings,
            slots: (0..settings.size.max(1))
                .map(|_| Mutex::default())
                .collect(),
            next: AtomicUsize::new(0),
        }
    }

    /// Creates `schema` if it is missing, on a connection opened now, so that a wrong URL or a
    /// server that is down fails here rather than at the first operation.
    pub async fn create_schema(&self, schema: &str) -> Result<(), Error> {
        check_identifier(schema)?;
        // One message, so one implicit transaction that rolls back whole if a part fails. The
        // lock: two pools creating the same schema at once would race in the catalog.
        let sql =
            format!("SELECT pg_advisory_xact_lock(7303); CREATE SCHEMA IF NOT EXISTS {schema}");
        let created = self
            .run(|connection| {
                let sql = sql.clone();
                Box::pin(async move { connection.batch(&sql).await })
            })
            .await?;
        Ok(created?)
    }

    /// Runs `work` on one connection, opening it first if needed. Work that failed with a
    /// serialization failure or a deadlock runs again, [`MAX_ATTEMPTS`] times in all.
    ///
    /// The outer error says the work could not run (no connection, or no answer in time); the
    /// inner one is the work's own.
    pub async fn run<T, E, F>(&self, mut work: F) -> Result<Result<T, E>, Error>
    where
        E: WorkFailure,
        F: for<'c> FnMut(&'c mut Connection) -> Work<'c, T, E>,
    {
        let mut lease = self.lease().await;
        loop {
            let connection = lease.connection().await?;
            let outcome = self.timed(work(connection)).await;
            if let Some(outcome) = lease.settle(outcome) {
                return outcome;
            }
        }
    }

    /// [`Pool::run`] for work whose future need not be `Send`: a synchronous facade that blocks
    /// its own thread on the work uses it. The same slots, policy and timeouts.
    pub async fn run_local<T, E>(
        &self,
        mut work: impl AsyncFnMut(&mut Connection) -> Result<T, E>,
    ) -> Result<Result<T, E>, Error>
    where
        E: WorkFailure,
    {
        let mut lease = self.lease().await;
        loop {
            let connection = lease.connection().await?;
            let outcome = self.timed(work(connection)).await;
            if let Some(outcome) = lease.settle(outcome) {
                return outcome;
            }
        }
    }

    /// A free slot, if there is one: the first free one after the last slot handed out with
    /// [`Settings::in_turn`], otherwise the first free one, so that connections are opened only
    /// as far as callers actually overlap. With none free, the caller waits for the next slot
    /// in turn.
    async fn lease(&self) -> Lease<'_> {
        let count = self.slots.len();
        let start = if self.settings.in_turn {
            self.next.fetch_add(1, Ordering::Relaxed)
        } else {
            0
        };
        let free = (0..count).find_map(|step| self.slots[(start + step) % count].try_lock().ok());
        let mut slot = match free {
            Some(slot) => slot,
            // A busy slot is never skipped for good: waiting on one in turn spreads the
            // waiters over every connection.
            None => {
                let index = if self.settings.in_turn {
                    start
                } else {
                    self.next.fetch_add(1, Ordering::Relaxed)
                };
                self.slots[index % count].lock().await
            }
        };
        if slot.busy {
            // Dropping the client closes the socket; the server rolls back what was open.
            slot.connection = None;
        }
        slot.busy = true;
        Lease {
            slot,
            config: &self.config,
            settings: self.settings,
            attempt: 1,
        }
    }

    async fn timed<T, E>(
        &self,
        work: impl Future<Output = Result<T, E>>,
    ) -> Result<Result<T, E>, Error> {
        match self.settings.operation_timeout {
            Some(limit) => tokio::time::timeout(limit, work)
                .await
                .map_err(|_elapsed| Error::OperationTimeout(limit)),
            None => Ok(work.await),
        }
    }
}

/// Work dropped before it returned (its caller gave up, as a server does when the client hangs
/// up) may have left a transaction open, holding its locks: close the connection now, so the
/// server rolls it back at once rather than when the slot is next used.
impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if self.slot.busy {
            self.slot.connection = None;
            self.slot.busy = false;
        }
    }
}

impl Lease<'_> {
    /// The slot's connection, opened first if there is none or the server closed it.
    async fn connection(&mut self) -> Result<&mut Connection, Error> {
        let slot = &mut *self.slot;
        if slot.connection.as_ref().is_none_or(Connection::is_closed) {
            slot.connection = None;
            match Connection::open(self.config).await {
                Ok(connection) => slot.connection = Some(connection),
                Err(error) => {
                    slot.busy = false;
                    return Err(error);
                }
            }
        }
        Ok(slot.connection.as_mut().expect("just opened"))
    }

    /// What one attempt's outcome does to the connection, and whether to try again (`None`)
    /// or return it. The one retry policy of the workspace.
    fn settle<T, E: WorkFailure>(
        &mut self,
        outcome: Result<Result<T, E>, Error>,
    ) -> Option<Result<Result<T, E>, Error>> {
        match &outcome {
            Ok(Ok(_)) => {}
            Ok(Err(failure)) => {
                let cause = failure.postgres();
                if self.settings.close_after_failure || cause.is_some_and(is_broken) {
                    // The server may have said FATAL before the socket closed: do not wait to
                    // notice the close, connect afresh.
                    self.slot.connection = None;
                }
                if self.attempt < MAX_ATTEMPTS && cause.is_some_and(is_transient) {
                    self.attempt += 1;
                    return None;
                }
            }
            // The work was abandoned mid-way: its connection may hold a reply nobody reads.
            Err(_) => self.slot.connection = None,
        }
        self.slot.busy = false;
        Some(outcome)
    }
}

/// The settings of the workspace's connections: `url`, named `application_name`, with
/// `search_path` set to `schema` and the [`CONNECT_TIMEOUT`].
pub fn config(url: &str, schema: &str, application_name: &str) -> Result<Config, Error> {
    check_identifier(schema)?;
    let mut config: Config = url.parse().map_err(Error::Url)?;
    config.application_name(application_name);
    config.options(format!("-c search_path={schema}"));
    config.connect_timeout(CONNECT_TIMEOUT);
    Ok(config)
}

/// Accepts lower-case SQL identifiers only, so that a schema name can be written into DDL.
pub fn check_identifier(name: &str) -> Result<(), Error> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_');
    let rest_ok = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if first_ok && rest_ok && name.len() <= 63 {
        Ok(())
    } else {
        Err(Error::Identifier(name.to_owned()))
    }
}

/// A serialization failure or a deadlock: the server rolled the transaction back.
fn is_transient(error: &tokio_postgres::Error) -> bool {
    error.code().is_some_and(|code| {
        *code == SqlState::T_R_SERIALIZATION_FAILURE || *code == SqlState::T_R_DEADLOCK_DETECTED
    })
}

/// Whether `error` leaves the connection unusable: anything but an ordinary error reported by
/// the server (a closed socket, an I/O failure, a FATAL or PANIC message).
fn is_broken(error: &tokio_postgres::Error) -> bool {
    match error.as_db_error().and_then(|db| db.parsed_severity()) {
        Some(Severity::Fatal | Severity::Panic) => true,
        Some(_) => false,
        None => error.as_db_error().is_none(),
    }
}
