//! The one error of the consumer's database: whatever the cause, the delivery's outcome is
//! decided by the next delivery, so the service answers each with 503 and the dispatcher
//! delivers again.

/// Why the database could not be opened, or could not answer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// SQLite refused an operation (the transaction, if any, was rolled back).
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL refused an operation, or could not be reached.
    #[error("postgres: {0}")]
    Postgres(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The database could not be opened: a bad URL or schema name, a file that cannot be
    /// created, a server that does not answer.
    #[error("cannot open the database: {0}")]
    Open(#[from] retrykey_durable::Error),
    /// A call on a blocking thread did not finish: it panicked, or the runtime is stopping.
    #[error("interrupted: {0}")]
    Interrupted(String),
}

impl From<retrykey::Error> for Error {
    /// The connection pool reports through the ledger's error; only its storage failures
    /// reach here.
    fn from(error: retrykey::Error) -> Self {
        match error {
            retrykey::Error::Storage(cause) => Self::Postgres(cause),
            other => Self::Postgres(Box::new(other)),
        }
    }
}
