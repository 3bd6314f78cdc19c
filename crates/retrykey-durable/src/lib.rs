//! The ledger on a database: the effect and its receipt commit in one transaction.
//!
//! Stage 1's [`retrykey::Store`] keeps its promise only while the process lives. This crate
//! keeps the same promise across crashes, restarts and several processes:
//!
//! - [`SqliteLedger`]: one SQLite file in WAL mode, the embedded default; needs nothing
//!   installed.
//! - [`PgLedger`]: PostgreSQL, for several processes or replicas sharing one authority.
//!
//! In both, the ledger total (the effect) and the operation record (key, scope, request,
//! receipt, schema version, creation time) are written by one transaction, and a unique
//! constraint on `(scope, key)` decides which of two concurrent writers is first. Both pass the
//! same contract suite as the in-memory store, unchanged.
//!
//! # Reading order
//!
//! 1. [`sqlite::ledger`]: the whole apply transaction in one function, the shape of the stage.
//! 2. [`record`]: the two rows both backends store, and how a record answers a retry.
//! 3. [`sqlite`]: the statements that transaction is made of.
//! 4. [`pg::ledger`]: the same transaction on PostgreSQL, where a unique index decides the
//!    first writer; then [`pg`] (its statements), [`pg::transaction`] (`BEGIN` in the same round
//!    trip) and [`pg::pool`] (the synchronous facade over the workspace's one PostgreSQL pool,
//!    `retrykey-pg`, which reconnects and retries transient failures).
//! 5. [`retention`], `versions.rs` and the two `schema` modules: how long records live, and
//!    old layouts.
//! 6. [`with_record`]: the one seam, on both databases, for rows that commit with a record.
//!
//! The checks that crash, race and cut these ledgers live in `retrykey-durable-checks`.
//!
//! # Example
//!
//! ```
//! use retrykey::{Key, Ledger, Request};
//! use retrykey_durable::{LedgerOptions, SqliteLedger};
//! # let scratch = retrykey_testkit::ScratchFile::new("doc-durable");
//! # let path = scratch.path();
//!
//! let ledger = SqliteLedger::open(path, LedgerOptions::default())?;
//! let key = Key::new("op-1")?;
//! let request = Request::new("convert-document", 7)?;
//!
//! let first = ledger.apply(&key, &request)?;
//! let retry = ledger.apply(&key, &request)?;
//! assert_eq!((first.operation, first.total, first.replayed), (1, 7, false));
//! assert_eq!((retry.operation, retry.total, retry.replayed), (1, 7, true));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[doc(hidden)]
pub mod crash;
mod error;
pub mod options;
pub mod pg;
pub mod record;
pub mod retention;
pub mod sqlite;
mod versions;
pub mod with_record;

pub use error::Error;
pub use options::{Durability, LedgerOptions};
pub use pg::PgLedger;
pub use sqlite::SqliteLedger;
pub use with_record::{LedgerTx, PgTx, SqliteTx, WithRecord};

/// The layout version this build writes into every record and understands when it opens a
/// database. Version 1 is the previous layout, which [`sqlite::schema`] and [`pg::schema`]
/// migrate.
pub const SCHEMA_VERSION: i64 = 2;
