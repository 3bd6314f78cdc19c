//! The synchronous facade over the workspace's PostgreSQL pool (`retrykey-pg`).
//!
//! The [`Ledger`](retrykey::Ledger) trait is synchronous. A [`BlockingPool`] owns a small tokio
//! runtime (current-thread: the calling thread drives its own connection) and blocks the calling
//! thread on each call: that runtime is the price of a synchronous API. The connections, the retry of
//! transient failures and the reconnect of broken connections are the shared pool's. Do not
//! call a `PgLedger` from async code: use `spawn_blocking` there.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, PoisonError};

use retrykey::Error;
use retrykey_pg::Connection;
use tokio::runtime::Runtime;
use tokio_postgres::Client;

pub use retrykey_pg::MAX_ATTEMPTS;

/// A few connections to one database, all with `search_path` set to one schema.
pub struct BlockingPool {
    runtime: Option<Runtime>,
    pool: retrykey_pg::Pool,
}

impl std::fmt::Debug for BlockingPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockingPool")
            .field("pool", &self.pool)
            .finish()
    }
}

/// A ledger's failure as the shared pool reads it: the database error inside, if any. Async
/// callers of `retrykey-pg` whose work reports through [`retrykey::Error`] wrap it in this.
#[derive(Debug)]
pub struct Failed(pub Error);

impl retrykey_pg::WorkFailure for Failed {
    fn postgres(&self) -> Option<&tokio_postgres::Error> {
        match &self.0 {
            Error::Storage(cause) => cause.downcast_ref(),
            _ => None,
        }
    }
}

impl BlockingPool {
    /// Prepares `size` connections to `url` whose tables live in `schema` (created if missing).
    /// The first one is opened now, so that a wrong URL fails here.
    pub fn connect(
        url: &str,
        schema: &str,
        size: usize,
        application_name: &str,
    ) -> Result<Self, crate::Error> {
        let config = retrykey_pg::config(url, schema, application_name)?;
        let runtime = runtime()?;
        // In turn: every connection warm, so that threads applying together run side by side
        // on the server, the races the contract and the labs provoke.
        let settings = retrykey_pg::Settings {
            in_turn: true,
            ..retrykey_pg::Settings::new(size)
        };
        let pool = retrykey_pg::Pool::new(config, settings);
        runtime.block_on(pool.create_schema(schema))?;
        Ok(Self {
            runtime: Some(runtime),
            pool,
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
        type Pools = std::sync::Mutex<HashMap<String, Arc<BlockingPool>>>;
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
        self.run_prepared(async |connection| work(connection.client_mut()).await)
    }

    /// [`BlockingPool::run`] with the connection itself, for work that uses the statements it
    /// keeps prepared.
    pub fn run_prepared<T>(
        &self,
        mut work: impl AsyncFnMut(&mut Connection) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let runtime = self
            .runtime
            .as_ref()
            .expect("the runtime lives as long as the pool");
        let outcome = runtime.block_on(
            self.pool
                .run_local(async |connection| work(connection).await.map_err(Failed)),
        );
        match outcome {
            Ok(done) => done.map_err(|Failed(error)| error),
            Err(retrykey_pg::Error::Postgres(error)) => Err(super::storage(error)),
            Err(error) => Err(Error::Storage(Box::new(error))),
        }
    }
}

impl Drop for BlockingPool {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            // Safe to drop anywhere, even inside another runtime.
            runtime.shutdown_background();
        }
    }
}

/// A current-thread runtime: the caller's thread drives its own connection inside `block_on`,
/// with no hop to a worker thread and back on every round trip.
fn runtime() -> Result<Runtime, crate::Error> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// Accepts lower-case SQL identifiers only, so a schema name can be written into DDL.
pub fn check_identifier(name: &str) -> Result<(), crate::Error> {
    Ok(retrykey_pg::check_identifier(name)?)
}
