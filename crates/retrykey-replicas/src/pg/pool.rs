//! The workspace's PostgreSQL pool (`retrykey-pg`) as the response store uses it.
//!
//! Every failure, whatever its cause, becomes [`Error::StoreUnavailable`]: the layer then
//! answers 503 before any handler runs (it fails closed). The store's work sends its own
//! `BEGIN` and leaves a failed transaction aborted, so the connection that failed is closed
//! rather than reused; the server rolls back whatever was open on it, and the next caller opens
//! a fresh one. So once the database is back, requests work again without a restart.

use std::time::Duration;

use retrykey_http::Error;
use retrykey_pg::Settings;

pub(crate) use retrykey_pg::Connection;

/// What a database call returns.
pub(crate) type PgResult<T> = Result<T, tokio_postgres::Error>;

/// How long one operation (a transaction, or a lookup) may take before the store gives up
/// (503). A server that stopped answering must not hold a request forever.
const OPERATION_TIMEOUT: Duration = Duration::from_secs(5);

/// A few connections to one database, all with `search_path` set to one schema, whose every
/// failure closes the store's answer (503).
#[derive(Debug)]
pub(crate) struct FailClosedPool {
    pool: retrykey_pg::Pool,
}

impl FailClosedPool {
    /// A pool of `size` connections to `url`, with `search_path` set to `schema`; none is
    /// opened yet.
    pub(crate) fn new(url: &str, schema: &str, size: usize) -> Result<Self, Error> {
        let config = retrykey_pg::config(url, schema, "retrykey-replicas").map_err(pool_failure)?;
        let settings = Settings {
            operation_timeout: Some(OPERATION_TIMEOUT),
            close_after_failure: true,
            ..Settings::new(size)
        };
        Ok(Self {
            pool: retrykey_pg::Pool::new(config, settings),
        })
    }

    /// Runs `work` on one connection, opening it first if needed. Work that failed with a
    /// serialization failure or a deadlock runs again, [`retrykey_pg::MAX_ATTEMPTS`] times in
    /// all.
    pub(crate) async fn run<T, F>(&self, work: F) -> Result<T, Error>
    where
        F: for<'c> Fn(&'c mut Connection) -> retrykey_pg::Work<'c, T, tokio_postgres::Error>,
    {
        self.pool
            .run(work)
            .await
            .map_err(pool_failure)?
            .map_err(|error| unavailable(&error))
    }
}

impl FailClosedPool {
    /// Runs `work` on one connection, once: work that is not the store's own (a handler's
    /// transaction) is never run again here, whatever failed.
    pub(crate) async fn run_once<T, F>(&self, work: F) -> Result<T, Error>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut Connection) -> retrykey_pg::Work<'c, T, tokio_postgres::Error>,
    {
        let mut work = Some(work);
        self.pool
            .run(move |conn| match work.take() {
                Some(work) => {
                    let ran = work(conn);
                    Box::pin(async move { ran.await.map_err(Once::Failed) })
                }
                None => Box::pin(async { Err(Once::Spent) }),
            })
            .await
            .map_err(pool_failure)?
            .map_err(|once| match once {
                Once::Failed(error) => unavailable(&error),
                Once::Spent => {
                    Error::StoreUnavailable("postgres: work run once was asked again".into())
                }
            })
    }
}

/// A failure of work run once. It names no database error, so the pool never tries it again
/// (and closes its connection, as after any failure here): `Spent` cannot happen.
enum Once {
    Failed(tokio_postgres::Error),
    Spent,
}

impl retrykey_pg::WorkFailure for Once {
    fn postgres(&self) -> Option<&tokio_postgres::Error> {
        None
    }
}

pub(crate) fn unavailable(error: &tokio_postgres::Error) -> Error {
    Error::StoreUnavailable(format!("postgres: {error}"))
}

/// The pool's own failures (a bad URL or schema name, no connection, no answer in time).
pub(crate) fn pool_failure(error: retrykey_pg::Error) -> Error {
    Error::StoreUnavailable(error.to_string())
}
