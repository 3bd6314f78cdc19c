//! One PostgreSQL pool for the workspace: a few connections, reopened when they break, and one
//! retry policy for the failures that mean "rolled back, nothing happened".
//!
//! Every stage that keeps its receipts in PostgreSQL runs its transactions through a
//! [`Pool`], so a serialization failure is retried the same number of times, and a connection
//! left inside a transaction is closed the same way, whichever stage meets it.
//!
//! # Reading order
//!
//! 1. [`Pool::run`]: a free slot, its connection (opened or reopened), the work, and what a
//!    failure does to both; [`Settings`] says which of those choices a caller may make.
//! 2. [`MAX_ATTEMPTS`] and [`WorkFailure`]: which failures are tried again, and how the pool finds
//!    the database error inside a caller's own error type.
//! 3. [`Connection`]: the client and the statements prepared on it, and how long opening one may
//!    take ([`CONNECT_TIMEOUT`]).
//! 4. [`config`], [`check_identifier`] and [`Error`]: the settings of every connection, and
//!    what goes wrong before any work runs.
//!
//! # Example
//!
//! ```no_run
//! use retrykey_pg::{Pool, Settings, config};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let url = "postgres://retrykey:retrykey@127.0.0.1:5432/retrykey";
//! let pool = Pool::new(config(url, "demo", "retrykey-demo")?, Settings::new(2));
//! pool.create_schema("demo").await?;
//! // Outer error: no connection, or no answer in time. Inner: the work's own failure.
//! let answer: i32 = pool
//!     .run(|connection| {
//!         Box::pin(async move { connection.one("SELECT 42", &[]).await.map(|row| row.get(0)) })
//!     })
//!     .await??;
//! assert_eq!(answer, 42);
//! # Ok(())
//! # }
//! ```

mod connection;
mod error;
mod pool;

pub use connection::{CONNECT_TIMEOUT, Connection};
pub use error::Error;
pub use pool::{MAX_ATTEMPTS, Pool, Settings, Work, WorkFailure, check_identifier, config};
