//! SQLite: the document service's file, holding the Stage 5 ledger and the outbox side by side,
//! so that a job and its event can commit in one transaction.
//!
//! The accepting transaction lives in [`accept`], one file, so that the lab
//! `labs/publish-outside-transaction` can copy it whole and change one thing; the statements
//! the dispatcher and the operator run live in [`events`].

pub mod accept;
pub mod events;
mod store;

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use retrykey::{Key, Receipt, Request};
use retrykey_durable::SqliteLedger;
use retrykey_program::Clock;
use rusqlite::{Connection, Transaction, TransactionBehavior};

use crate::action::OperatorAction;
use crate::event::millis;
use crate::{
    Accepted, Acted, ActionError, Claimed, DocumentsOptions, Error, EventId, EventRow, Marks,
};

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

/// The accepting transaction, the piece a lab under `labs/` replaces: the one method has the
/// correct default, and [`StandardAccept`] uses it. A seam for the labs, hidden from the
/// documented API (see `labs/README.md`).
#[doc(hidden)]
pub trait AcceptSteps: Send + Sync + 'static {
    /// Accepts a job under a key, writing its outgoing event: see [`accept::accept`].
    fn accept(&self, outbox: &SqliteOutbox, key: &Key, job: &Request) -> Result<Accepted, Error> {
        accept::accept(outbox, key, job)
    }
}

/// The correct accept: what [`SqliteOutbox::open`] uses.
#[derive(Clone, Copy, Debug, Default)]
pub struct StandardAccept;

impl AcceptSteps for StandardAccept {}

/// The document service's database in one SQLite file: the ledger that accepts jobs under
/// operation keys, and the outbox beside it. A handle: clones share the file's connections.
///
/// Its methods block; as an [`OutboxStore`](crate::store::OutboxStore) each call runs on a
/// blocking thread.
#[derive(Clone)]
pub struct SqliteOutbox {
    file: Arc<OutboxFile>,
}

/// What the handles of one opened file share.
struct OutboxFile {
    ledger: SqliteLedger,
    /// A second connection, for the outbox's own statements: the ledger's connection is private
    /// to its apply transaction, and a dispatcher's claims need not wait for an accept's lock
    /// on it in this process (SQLite's file lock orders the two).
    conn: Mutex<Connection>,
    options: DocumentsOptions,
    steps: &'static dyn AcceptSteps,
}

impl std::fmt::Debug for SqliteOutbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteOutbox")
            .field("ledger", &self.file.ledger)
            .field("options", &self.file.options)
            .finish_non_exhaustive()
    }
}

impl SqliteOutbox {
    /// Opens (or creates) the file at `path`: the ledger's tables and the outbox's.
    pub fn open(path: &Path, options: DocumentsOptions) -> Result<Self, Error> {
        Self::open_with_steps(path, options, &StandardAccept)
    }

    /// The same, with the accepting transaction a lab under `labs/` replaces.
    #[doc(hidden)]
    pub fn open_with_steps(
        path: &Path,
        options: DocumentsOptions,
        steps: &'static dyn AcceptSteps,
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
            file: Arc::new(OutboxFile {
                ledger,
                conn: Mutex::new(conn),
                options,
                steps,
            }),
        })
    }

    /// Accepts `job` under `key`: the job and its event commit together; a retry with the same
    /// key answers from the ledger's record and writes nothing.
    pub fn accept(&self, key: &Key, job: &Request) -> Result<Accepted, Error> {
        self.file.steps.accept(self, key, job)
    }

    /// The ledger jobs are accepted by.
    pub fn ledger(&self) -> &SqliteLedger {
        &self.file.ledger
    }

    /// The scope jobs are accepted in.
    pub fn scope(&self) -> &str {
        &self.file.options.scope
    }

    /// The clock's time, in ms since the Unix epoch.
    pub fn now_ms(&self) -> i64 {
        self.clock().now_ms()
    }

    /// The clock this database reads.
    pub fn clock(&self) -> Clock {
        self.file.options.clock
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
        self.file
            .conn
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The jobs the ledger has accepted (and not yet swept), by number.
    pub fn jobs(&self) -> Result<Vec<u64>, Error> {
        let scope = self.scope().to_owned();
        self.read(|conn| {
            conn.prepare_cached(
                "SELECT operation FROM operations WHERE scope = ?1 ORDER BY operation",
            )?
            .query_map([scope], |row| Ok(row.get::<_, i64>(0)?.cast_unsigned()))?
            .collect()
        })
    }

    /// Claims up to `limit` due events for `owner`, each for `lease`, with a new token.
    pub fn claim(&self, owner: &str, lease: Duration, limit: usize) -> Result<Vec<Claimed>, Error> {
        let now = self.now_ms();
        // A look takes no lock: only one that finds due events takes the file's write lock,
        // which accepting jobs needs too.
        if !self.read(|conn| events::any_due(conn, now))? {
            return Ok(Vec::new());
        }
        self.write(|tx| events::claim(tx, owner, now, now + millis(lease), limit))
    }

    /// Marks a claimed event delivered, if the claim is still current.
    pub fn mark_delivered(
        &self,
        claimed: &Claimed,
        conversion: Option<u64>,
    ) -> Result<bool, Error> {
        let now = self.now_ms();
        self.write(|tx| events::mark_delivered(tx, claimed, conversion, now))
    }

    /// Lets a claim go, the event due again after `wait`.
    pub fn postpone(&self, claimed: &Claimed, error: &str, wait: Duration) -> Result<bool, Error> {
        let due = self.now_ms() + millis(wait);
        self.write(|tx| events::postpone(tx, claimed, error, due))
    }

    /// Settles a claimed event as rejected by the consumer.
    pub fn mark_rejected(&self, claimed: &Claimed, error: &str) -> Result<bool, Error> {
        let now = self.now_ms();
        self.write(|tx| events::mark_rejected(tx, claimed, error, now))
    }

    /// The event `id`, as stored.
    pub fn find(&self, id: &str) -> Result<Option<EventRow>, Error> {
        self.read(|conn| events::find(conn, id))
    }

    /// Events the consumer has not acknowledged, oldest first, at most `limit`.
    pub fn not_delivered(&self, limit: usize) -> Result<Vec<EventRow>, Error> {
        self.read(|conn| events::not_delivered(conn, limit))
    }

    /// Every event, by job.
    pub fn events(&self) -> Result<Vec<EventRow>, Error> {
        self.read(events::all)
    }

    /// The operator's re-drive of event `id`.
    pub fn redrive(&self, id: &str) -> Result<Result<Acted, ActionError>, Error> {
        self.act(id, OperatorAction::Redrive)
    }

    /// The operator's decision that event `id` failed, for `reason`.
    pub fn mark_failed(&self, id: &str, reason: &str) -> Result<Result<Acted, ActionError>, Error> {
        self.act(id, OperatorAction::Fail(reason))
    }

    /// The retention sweep: the ledger's expired records, then the settled events whose record
    /// is gone.
    pub fn sweep(&self, kept: Duration) -> Result<usize, Error> {
        self.ledger().sweep(SystemTime::now())?;
        let before = self.now_ms() - millis(kept);
        self.write(|tx| events::sweep(tx, before))
    }

    /// Reads event `id`, decides, and writes the change, all in one `BEGIN IMMEDIATE`
    /// transaction.
    fn act(
        &self,
        id: &str,
        action: OperatorAction<'_>,
    ) -> Result<Result<Acted, ActionError>, Error> {
        let now = self.now_ms();
        self.write(|tx| {
            let Some(row) = events::find(tx, id)? else {
                return Ok(Err(ActionError::UnknownEvent(id.to_owned())));
            };
            let changed = match action.decide(&row, now) {
                Ok(changed) => changed,
                Err(refused) => return Ok(Err(refused)),
            };
            if changed {
                match action {
                    OperatorAction::Redrive => events::redrive(tx, id, now)?,
                    OperatorAction::Fail(reason) => events::mark_failed(tx, id, reason, now)?,
                }
            }
            let event =
                events::find(tx, id)?.expect("the row read in this transaction is still there");
            Ok(Ok(Acted { changed, event }))
        })
    }
}
