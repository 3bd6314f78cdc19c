//! SQLite: the connection settings and the statements the apply transaction is made of.
//!
//! The transaction itself lives in [`ledger`], one file, so that each negative variant can copy
//! it whole and change one thing.

pub mod ledger;
pub mod schema;

use std::path::Path;
use std::time::Duration;

use retrykey::{Error, Key, Receipt, Request};
use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::record::{State, Stored, from_sql, to_sql};
use crate::{Durability, SCHEMA_VERSION};

pub use ledger::SqliteLedger;

/// A file name no other throwaway ledger of this machine uses, in the temporary folder.
///
/// The counter lives here rather than in `ledger.rs`: the negative variants copy that file, and
/// each copy would otherwise count from zero and open the same files as the others in one
/// process. A test knob, compiled only with the `test-support` feature.
#[cfg(feature = "test-support")]
pub fn ephemeral_path() -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};

    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = format!(
        "retrykey-{}-{}-{}.sqlite",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed),
        crate::options::unix_seconds(std::time::SystemTime::now()),
    );
    std::env::temp_dir().join(name)
}

/// Deletes a database file with its write-ahead log and shared-memory index; what is already
/// gone, or cannot be deleted, is left as it is (this is clean-up, not bookkeeping).
pub fn remove_files(path: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut file = path.as_os_str().to_owned();
        file.push(suffix);
        let _ = std::fs::remove_file(file);
    }
}

/// How long a writer waits for another connection's write lock before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// How many times a transaction that found the database locked is tried in all.
pub const MAX_ATTEMPTS: u32 = 3;

/// Opens `path` with the lab's settings: WAL, the chosen durability, a busy timeout.
pub fn connect(path: &Path, durability: Durability) -> Result<Connection, crate::Error> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // WAL: readers never block the writer, and a commit is one append to the log. Switching a
    // new file to WAL needs the file to itself, and SQLite answers "locked" at once there
    // instead of waiting in its busy handler: several processes opening one new file wait here.
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    while let Err(error) = conn.pragma_update(None, "journal_mode", "WAL") {
        let busy = matches!(
            error.sqlite_error_code(),
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        );
        if !busy || std::time::Instant::now() >= deadline {
            return Err(error.into());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let synchronous = match durability {
        Durability::Full => "FULL",
        Durability::Normal => "NORMAL",
    };
    conn.pragma_update(None, "synchronous", synchronous)?;
    Ok(conn)
}

/// The record of `key` in `scope`, if there is one.
pub fn lookup(conn: &Connection, scope: &str, key: &Key) -> rusqlite::Result<Option<Stored>> {
    conn.prepare_cached(
        "SELECT job, units, operation, committed_total FROM operations
         WHERE scope = ?1 AND key = ?2",
    )?
    .query_row(params![scope, key.as_str()], |row| {
        Ok(Stored {
            job: row.get(0)?,
            units: from_sql(row.get(1)?),
            receipt: Receipt {
                operation: from_sql(row.get(2)?),
                total: from_sql(row.get(3)?),
                replayed: false,
            },
        })
    })
    .optional()
}

/// The ledger row of `scope`.
pub fn read_state(conn: &Connection, scope: &str) -> rusqlite::Result<State> {
    conn.prepare_cached("SELECT total, records, operations FROM ledger WHERE scope = ?1")?
        .query_row(params![scope], |row| {
            Ok(State {
                total: from_sql(row.get(0)?),
                records: from_sql(row.get(1)?),
                operations: from_sql(row.get(2)?),
            })
        })
}

/// The effect: the new total, counted as one more operation and one more live record (the one
/// [`insert_record`] writes in the same transaction).
pub fn add_effect(tx: &Transaction<'_>, scope: &str, total: u64) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "UPDATE ledger SET total = ?2, operations = operations + 1, records = records + 1
         WHERE scope = ?1",
    )?
    .execute(params![scope, to_sql(total)])?;
    Ok(())
}

/// The record: key, request, receipt, schema version and creation time (its count is
/// [`add_effect`]'s).
///
/// The primary key `(scope, key)` makes a second record for the same key fail.
pub fn insert_record(
    tx: &Transaction<'_>,
    scope: &str,
    key: &Key,
    request: &Request,
    receipt: Receipt,
    created_at: i64,
) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT INTO operations
           (scope, key, job, units, operation, committed_total, schema_version, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        scope,
        key.as_str(),
        request.job(),
        to_sql(request.units()),
        to_sql(receipt.operation),
        to_sql(receipt.total),
        SCHEMA_VERSION,
        created_at,
    ])?;
    Ok(())
}

/// Deletes the records of `scope` created before `cutoff` (Unix seconds); returns how many.
pub fn delete_expired(conn: &mut Connection, scope: &str, cutoff: i64) -> rusqlite::Result<usize> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let deleted = tx.execute(
        "DELETE FROM operations WHERE scope = ?1 AND created_at < ?2",
        params![scope, cutoff],
    )?;
    tx.execute(
        "UPDATE ledger SET records = records - ?2 WHERE scope = ?1",
        params![scope, deleted as i64],
    )?;
    tx.commit()?;
    Ok(deleted)
}

/// Runs `attempt` again while SQLite reports the database busy or locked, at most
/// [`MAX_ATTEMPTS`] times; any other failure is returned at once.
pub fn with_retry<T>(mut attempt: impl FnMut() -> Result<T, Error>) -> Result<T, Error> {
    let mut tries = 1;
    loop {
        match attempt() {
            Err(Error::Storage(cause)) if tries < MAX_ATTEMPTS && is_busy(cause.as_ref()) => {
                tries += 1;
            }
            other => return other,
        }
    }
}

fn is_busy(cause: &(dyn std::error::Error + 'static)) -> bool {
    matches!(
        cause
            .downcast_ref::<rusqlite::Error>()
            .and_then(rusqlite::Error::sqlite_error_code),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// A SQLite failure as the ledger reports it: the outcome is unknown to the caller.
pub fn storage(error: rusqlite::Error) -> Error {
    Error::Storage(Box::new(error))
}
