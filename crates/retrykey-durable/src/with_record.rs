//! What else an apply writes in its transaction: the one seam both ledgers take.
//!
//! A program that keeps more tables beside the ledger (Stage 7's outbox keeps a job's outgoing
//! event) hands [`apply_with`](crate::SqliteLedger::apply_with) a [`WithRecord`]: its rows
//! are written inside the apply's own transaction, for a new operation only, so they commit
//! with the effect and the record, or not at all. The seam has one shape on both databases;
//! only what a write is given and what it returns differ, and [`LedgerTx`] names them.

use std::future::Future;
use std::pin::Pin;

use retrykey::{Error, Receipt};

/// An apply's transaction on one database: what a write in it is given, and what it returns.
pub trait LedgerTx {
    /// What a write is given: the open transaction, or the client it runs on.
    type Tx<'c>: ?Sized;
    /// What a write returns.
    type Written<'c>;

    /// What writing nothing returns.
    fn nothing<'c>() -> Self::Written<'c>;
}

/// SQLite: a write is a call inside the open `BEGIN IMMEDIATE` transaction, after the record.
#[derive(Debug)]
pub enum SqliteTx {}

impl LedgerTx for SqliteTx {
    type Tx<'c> = rusqlite::Transaction<'c>;
    type Written<'c> = rusqlite::Result<()>;

    fn nothing<'c>() -> Self::Written<'c> {
        Ok(())
    }
}

/// PostgreSQL: a write is a future on the transaction's client, sent in the same round trip as
/// the record, before its answer is known: when the record yields to a concurrent writer of the
/// key, the transaction rolls back, these rows with it.
#[derive(Debug)]
pub enum PgTx {}

impl LedgerTx for PgTx {
    type Tx<'c> = tokio_postgres::Client;
    type Written<'c> = Pin<Box<dyn Future<Output = Result<(), Error>> + Send + 'c>>;

    fn nothing<'c>() -> Self::Written<'c> {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// Rows that commit with an operation's record, written in the apply's transaction on `D`.
pub trait WithRecord<D: LedgerTx>: Sync {
    /// Writes them in `tx`, for the operation `receipt` answers.
    fn write<'c>(&'c self, tx: &'c D::Tx<'c>, receipt: Receipt) -> D::Written<'c>;
}

/// Nothing more: the plain [`Ledger::apply`](retrykey::Ledger::apply).
impl<D: LedgerTx> WithRecord<D> for () {
    fn write<'c>(&'c self, _tx: &'c D::Tx<'c>, _receipt: Receipt) -> D::Written<'c> {
        D::nothing()
    }
}

/// On SQLite, a closure over the transaction will do.
impl<F> WithRecord<SqliteTx> for F
where
    F: Fn(&rusqlite::Transaction<'_>, Receipt) -> rusqlite::Result<()> + Sync,
{
    fn write<'c>(
        &'c self,
        tx: &'c rusqlite::Transaction<'c>,
        receipt: Receipt,
    ) -> rusqlite::Result<()> {
        self(tx, receipt)
    }
}
