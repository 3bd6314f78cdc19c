// Mirrored by labs/record-before-effect, labs/separate-transactions: see labs/README.md before changing this file.
//! The SQLite ledger: the effect and the record are written and committed by one transaction.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::SystemTime;

use crate::crash::Point;
use crate::options::unix_seconds;
use crate::sqlite::{self, add_effect, insert_record, lookup, read_state, storage};
use crate::{LedgerOptions, SqliteTx, WithRecord};
use retrykey::{Error, Key, Ledger, Receipt, Request};
use rusqlite::{Connection, TransactionBehavior};

/// A [`Ledger`] in one SQLite file. Several handles, in one process or several, may open the
/// same file: SQLite's write lock orders their transactions.
#[derive(Debug)]
pub struct SqliteLedger {
    conn: Mutex<Connection>,
    options: LedgerOptions,
    path: PathBuf,
    ephemeral: bool,
}

impl SqliteLedger {
    /// Opens (creating or migrating) the ledger file at `path`.
    pub fn open(path: impl AsRef<Path>, options: LedgerOptions) -> Result<Self, crate::Error> {
        let path = path.as_ref().to_path_buf();
        let mut conn = sqlite::connect(&path, options.durability)?;
        sqlite::schema::prepare(&mut conn, &options.scope, unix_seconds(SystemTime::now()))?;
        Ok(Self {
            conn: Mutex::new(conn),
            options,
            path,
            ephemeral: false,
        })
    }

    /// A fresh, empty ledger in a new file under the temporary directory, deleted on drop: a
    /// test knob, compiled only with the `test-support` feature.
    #[cfg(feature = "test-support")]
    pub fn ephemeral(limits: retrykey::Limits) -> Result<Self, crate::Error> {
        let mut ledger = Self::open(sqlite::ephemeral_path(), LedgerOptions::with_limits(limits))?;
        ledger.ephemeral = true;
        Ok(ledger)
    }

    /// The file this ledger lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The options it was opened with.
    pub fn options(&self) -> &LedgerOptions {
        &self.options
    }

    /// Deletes the records created before `now` minus the retention window; returns how many.
    pub fn sweep(&self, now: SystemTime) -> Result<usize, Error> {
        let cutoff = self.options.sweep_cutoff(now);
        sqlite::delete_expired(&mut self.lock(), &self.options.scope, cutoff).map_err(storage)
    }

    /// Applies as [`Ledger::apply`] does, and runs `also` inside the same transaction, after
    /// the record and before the commit, for a new operation only (a replay writes nothing).
    /// Rows `also` writes commit with the effect and the record, or not at all.
    pub fn apply_with(
        &self,
        key: &Key,
        request: &Request,
        also: &dyn WithRecord<SqliteTx>,
    ) -> Result<Receipt, Error> {
        let mut conn = self.lock();
        sqlite::with_retry(|| self.apply_once(&mut conn, key, request, also))
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic inside a transaction rolled it back when it unwound: the connection is usable.
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    // ANCHOR: apply_once
    fn apply_once(
        &self,
        conn: &mut Connection,
        key: &Key,
        request: &Request,
        also: &dyn WithRecord<SqliteTx>,
    ) -> Result<Receipt, Error> {
        let scope = self.options.scope.as_str();
        let hooks = &self.options.hooks;
        // IMMEDIATE takes the write lock now: from the lookup to the commit no other connection
        // can write, so "this key is new" stays true until its record is in.
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(storage)?;

        // The lookup comes first, so a replay is answered even when the ledger is full.
        if let Some(stored) = lookup(&tx, scope, key).map_err(storage)? {
            return stored.replay(request);
        }

        let limits = self.options.limits;
        let state = read_state(&tx, scope).map_err(storage)?;
        let total = limits.admit(state.records, state.total, request.units())?;
        let receipt = Receipt {
            operation: state.operations + 1,
            total,
            replayed: false,
        };

        // The effect and the record, in the same transaction: both commit, or neither does.
        hooks.at(Point::BeforeEffect);
        add_effect(&tx, scope, total).map_err(storage)?;
        hooks.at(Point::AfterEffect);
        let created_at = unix_seconds(SystemTime::now());
        insert_record(&tx, scope, key, request, receipt, created_at).map_err(storage)?;
        // Whatever else must commit with the record (Stage 7: the job's outgoing event).
        also.write(&tx, receipt).map_err(storage)?;
        hooks.at(Point::AfterRecord);
        tx.commit().map_err(storage)?;
        hooks.at(Point::AfterCommit);
        Ok(receipt)
    }
    // ANCHOR_END: apply_once
}

impl Ledger for SqliteLedger {
    fn apply(&self, key: &Key, request: &Request) -> Result<Receipt, Error> {
        self.apply_with(key, request, &())
    }

    fn total(&self) -> Result<u64, Error> {
        Ok(read_state(&self.lock(), &self.options.scope)
            .map_err(storage)?
            .total)
    }

    fn records(&self) -> Result<usize, Error> {
        let state = read_state(&self.lock(), &self.options.scope).map_err(storage)?;
        Ok(state.records as usize)
    }

    fn receipt(&self, key: &Key) -> Result<Option<Receipt>, Error> {
        let stored = lookup(&self.lock(), &self.options.scope, key).map_err(storage)?;
        Ok(stored.map(|stored| stored.receipt))
    }
}

impl Drop for SqliteLedger {
    fn drop(&mut self) {
        if self.ephemeral {
            sqlite::remove_files(&self.path);
        }
    }
}
