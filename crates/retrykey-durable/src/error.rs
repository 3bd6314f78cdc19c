//! Errors from opening, migrating and sweeping a durable ledger (apply reports through
//! [`retrykey::Error`]).

/// Why a durable ledger could not be opened, migrated or swept.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// SQLite refused an operation.
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL refused an operation, or the connection failed.
    #[error("postgres: {0}")]
    Postgres(#[from] tokio_postgres::Error),
    /// The runtime that drives the PostgreSQL connections could not start.
    #[error("runtime: {0}")]
    Runtime(#[from] std::io::Error),
    /// The database was written by a newer layout than this build understands.
    #[error("the database has schema version {found}; this build understands up to {supported}")]
    SchemaTooNew {
        /// The version found in the database.
        found: i64,
        /// The newest version this build understands.
        supported: i64,
    },
    /// A record in an old layout could not be read during a migration.
    #[error("cannot migrate the record for key {key:?}: {problem}")]
    Migration {
        /// The key of the unreadable record.
        key: String,
        /// What was wrong with it.
        problem: String,
    },
    /// A setting was not acceptable (an empty scope, a bad schema name, a missing URL).
    #[error("configuration: {0}")]
    Config(String),
    /// The PostgreSQL pool gave up before the server answered (a connect timeout).
    #[error(transparent)]
    Pool(retrykey_pg::Error),
}

/// The shared pool's failures, in the variants this crate reported before it shared the pool.
impl From<retrykey_pg::Error> for Error {
    fn from(error: retrykey_pg::Error) -> Self {
        match error {
            retrykey_pg::Error::Url(error) | retrykey_pg::Error::Postgres(error) => {
                Error::Postgres(error)
            }
            retrykey_pg::Error::Identifier(_) => Error::Config(error.to_string()),
            other => Error::Pool(other),
        }
    }
}

impl From<Error> for retrykey::Error {
    fn from(error: Error) -> Self {
        retrykey::Error::Storage(Box::new(error))
    }
}
