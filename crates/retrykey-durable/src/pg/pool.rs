//! The connection pool behind the synchronous facade, and the retry of transient failures.
//!
//! The [`Ledger`](retrykey::Ledger) trait is synchronous. A [`Pool`] owns a small tokio runtime
//! (current-thread: the calling thread drives its own connection) and a few `tokio-postgres`
//! clients; each call blocks the calling thread on its own future. Do not call a `PgLedger` from
//! async code: use `spawn_blocking` there.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, PoisonError};

use retrykey::Error;
use tokio::runtime::Runtime;
use tokio::sync::Mutex;
use tokio_postgres::error::{Severity, SqlState};
use tokio_postgres::{Client, Config, NoTls};

use super::storage;

/// How many times a transaction that failed with a serialization failure or a deadlock is tried
/// in all. Those failures mean "rolled back, nothing happened": trying again is safe.
pub const MAX_ATTEMPTS: u32 = 5;

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
