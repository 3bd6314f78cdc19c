//! What can go wrong in the pool itself, before or around the caller's work.

use std::time::Duration;

/// Why the pool could not run the work (the work's own failures are returned apart).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The URL could not be read.
    #[error("postgres URL: {0}")]
    Url(#[source] tokio_postgres::Error),
    /// The server refused a connection, or the connection failed.
    #[error("postgres: {0}")]
    Postgres(#[from] tokio_postgres::Error),
    /// No connection within the connect timeout.
    #[error("postgres: could not connect within {0:?}")]
    ConnectTimeout(Duration),
    /// The work did not finish within the operation timeout.
    #[error("postgres: no answer within {0:?}")]
    OperationTimeout(Duration),
    /// A schema name that cannot be written into DDL as it is.
    #[error("{0:?} is not a schema name (lower-case letters, digits, _; at most 63 bytes)")]
    Identifier(String),
}
