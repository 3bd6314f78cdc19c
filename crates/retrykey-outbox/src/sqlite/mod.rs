//! SQLite: the document service's file, holding the Stage 5 ledger and the outbox side by side,
//! so that a job and its event can commit in one transaction.
//!
//! The accepting transaction lives in [`accept`], one file, so that the lab
//! `labs/publish-outside-transaction` can copy it whole and change one thing; the statements
//! the dispatcher and the operator run live in [`events`].

pub mod accept;
pub mod events;

use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};

use retrykey::{Key, Receipt, Request};
use retrykey_durable::SqliteLedger;
use retrykey_program::Clock;
use rusqlite::{Connection, Transaction, TransactionBehavior};

use crate::{Accepted, DocumentsOptions, Error, EventId, Marks};

/// The outbox: one row per accepted job, the job's outgoing event and its delivery history.
///
/// `UNIQUE (scope, operation)`: a job has at most one event, whoever tries to write a second.
/// (Created after the ledger's tables, in the same file.)
pub const SCHEMA: &str = "
-- ANCHOR: tables
CREATE TABLE IF NOT EXISTS outbox (
    event_id     TEXT PRIMARY KEY,
    scope        TEXT NOT NULL,
    operation    INTEGER NOT NULL,   -- the job's number in the ledger
    job          TEXT NOT NULL,
    units        INTEGER NOT NULL,
    accepted_at  INTEGER NOT NULL,   -- ms since the epoch, as every time here
    state        TEXT NOT NULL DEFAULT 'pending',
    due_at       INTEGER NOT NULL,   -- pending: the earliest next claim
    deliveries   INTEGER NOT NULL DEFAULT 0,
    owner        TEXT,               -- the dispatcher that claimed it last
    token        INTEGER,            -- that claim's fencing token
    lease_until  INTEGER,            -- while claimed: the end of the claim
    last_error   TEXT,
    settled_at   INTEGER,            -- delivered, rejected or failed
    conversion   INTEGER,            -- the consumer's number, from its acknowledgement
    reason       TEXT,               -- failed: the operator's reason
    UNIQUE (scope, operation)
);
-- In the claim's order: a claim reads the events it takes and stops, with no sort of every
-- pending event. (It replaces an index on the due time alone.)
DROP INDEX IF EXISTS outbox_due;
CREATE INDEX IF NOT EXISTS outbox_claim_order ON outbox (due_at, operation) WHERE state = 'pending';
CREATE TABLE IF NOT EXISTS outbox_tokens (
    id   INTEGER PRIMARY KEY CHECK (id = 0),
    last INTEGER NOT NULL          -- fencing tokens only grow, across every event
);
INSERT OR IGNORE INTO outbox_tokens VALUES (0, 0);
-- ANCHOR_END: tables
-- The sweep asks whether a job's ledger record is still there, by number.
CREATE INDEX IF NOT EXISTS operations_by_number ON operations (scope, operation);
";

/// The accepting transaction, as a plain function: a lab under `labs/` swaps it.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct AcceptSteps {
    /// Accepts a job under a key, writing its outgoing event.
    pub accept: fn(&SqliteDocuments, &Key, &Request) -> Result<Accepted, Error>,
}

impl AcceptSteps {
    /// The correct accept: [`accept::accept`].
    pub fn standard() -> Self {
        Self {
            accept: accept::accept,
        }
    }
}

/// The document service's database in one SQLite file: the ledger that accepts jobs under
/// operation keys, and the outbox beside it.
#[derive(Debug)]
pub struct SqliteDocuments {
    ledger: SqliteLedger,
    /// A second connection, for the outbox's own statements: the ledger's connection is private
    /// to its apply transaction, and a dispatcher's claims need not wait for an accept's lock
    /// on it in this process (SQLite's file lock orders the two).
    conn: Mutex<Connection>,
    options: DocumentsOptions,
    steps: AcceptSteps,
}

impl SqliteDocuments {
    /// Opens (or creates) the file at `path`: the ledger's tables and the outbox's.
    pub fn open(path: &Path, options: DocumentsOptions) -> Result<Self, Error> {
        Self::open_with_steps(path, options, AcceptSteps::standard())
    }

    /// The same, with the accepting transaction a lab under `labs/` replaces.
    #[doc(hidden)]
    pub fn open_with_steps(
        path: &Path,
        options: DocumentsOptions,
        steps: AcceptSteps,
    ) -> Result<Self, Error> {
        if options.marks != Marks::Durable {
            return Err(Error::Config(
                "relaxed marks need PostgreSQL: a SQLite commit's durability is the file's \
                 setting, not the transaction's"
                    .to_owned(),
            ));
        }
        // The ledger's tables first: the outbox's index is on one of them.
        let ledger = SqliteLedger::open(path, options.ledger())?;
        let conn = retrykey_durable::sqlite::connect(path, options.durability)?;
        conn.execute_batch(SCHEMA)?;
        Ok(Self {
            ledger,
            conn: Mutex::new(conn),
            options,
            steps,
        })
    }

    /// Accepts `job` under `key`: the job and its event commit together; a retry with the same
    /// key answers from the ledger's record and writes nothing.
    pub fn accept(&self, key: &Key, job: &Request) -> Result<Accepted, Error> {
        (self.steps.accept)(self, key, job)
    }

    /// The ledger jobs are accepted by.
    pub fn ledger(&self) -> &SqliteLedger {
        &self.ledger
    }

    /// The scope jobs are accepted in.
    pub fn scope(&self) -> &str {
        &self.options.scope
    }

    /// The clock's time, in ms since the Unix epoch.
    pub fn now_ms(&self) -> i64 {
        self.clock().now_ms()
    }

    /// The clock this database reads.
    pub fn clock(&self) -> Clock {
        self.options.clock
    }

    /// The answer for the job `receipt` names: the receipt and the job's event, `written` when
    /// this very call wrote it (a replay reads the event the first call wrote).
    pub fn accepted(&self, receipt: Receipt, written: EventId) -> Result<Accepted, Error> {
        if !receipt.replayed {
            return Ok(Accepted {
                receipt,
                event: written,
            });
        }
        let event = events::event_of_job(&self.lock(), self.scope(), receipt.operation)?;
        let event = event.ok_or(Error::EventMissing {
            operation: receipt.operation,
        })?;
        Ok(Accepted { receipt, event })
    }

    /// Runs `work` in one `BEGIN IMMEDIATE` transaction on the outbox's connection and commits
    /// it; an error rolls it back. The write lock is taken first, so what `work` reads stays
    /// true until it commits.
    #[doc(hidden)]
    pub fn write<T>(
        &self,
        work: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<T>,
    ) -> Result<T, Error> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let result = work(&tx)?;
        tx.commit()?;
        Ok(result)
    }

    /// Runs `read` on the outbox's connection, outside any transaction.
    pub(crate) fn read<T>(
        &self,
        read: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, Error> {
        Ok(read(&self.lock())?)
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic inside a transaction dropped it, which rolled it back: the connection is
        // still usable.
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
