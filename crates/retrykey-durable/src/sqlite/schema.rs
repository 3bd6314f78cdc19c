//! The SQLite layout, its version number, and the migration from the previous layout.
//!
//! Version 1 (the previous release) kept one ledger per file, no scope, no creation time, and
//! the receipt as one text field `"<operation>/<total>"`. Version 2 (this release) stores the
//! scope, the receipt as typed columns, the schema version of each record and its creation time.
//! Opening a version-1 file migrates it in one transaction; its receipts replay unchanged.

use std::path::Path;

use retrykey::{Key, Request};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::versions::{LAYOUT_V1, Opening, read_v1_receipt, v1_records, version_table};
use crate::{Error, SCHEMA_VERSION};

const LAYOUT_V2: &str = "
-- ANCHOR: sqlite_tables
CREATE TABLE ledger (
    scope      TEXT PRIMARY KEY,
    total      INTEGER NOT NULL,
    records    INTEGER NOT NULL,
    operations INTEGER NOT NULL
);
CREATE TABLE operations (
    scope           TEXT    NOT NULL,
    key             TEXT    NOT NULL,
    job             TEXT    NOT NULL,
    units           INTEGER NOT NULL,
    operation       INTEGER NOT NULL,
    committed_total INTEGER NOT NULL,
    schema_version  INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    PRIMARY KEY (scope, key)
) WITHOUT ROWID;
CREATE INDEX operations_by_age ON operations (scope, created_at);
-- ANCHOR_END: sqlite_tables
";

/// Brings the database to [`SCHEMA_VERSION`] and makes sure `scope` has its ledger row.
///
/// `now` (Unix seconds) becomes the creation time of migrated records, which had none: their
/// retention window starts at the migration.
pub fn prepare(conn: &mut Connection, scope: &str, now: i64) -> Result<(), Error> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    match Opening::of(version(&tx)?)? {
        Opening::Create => {
            tx.execute_batch(LAYOUT_V2)?;
            tx.execute_batch(&version_table())?;
        }
        Opening::MigrateV1 => migrate_v1(&tx, scope, now)?,
        Opening::Current => {}
    }
    tx.execute(
        "INSERT OR IGNORE INTO ledger (scope, total, records, operations) VALUES (?1, 0, 0, 0)",
        [scope],
    )?;
    tx.commit()?;
    Ok(())
}

/// The layout version recorded in the database, `None` for a new one (also for tests and
/// operators).
pub fn version(conn: &Connection) -> Result<Option<i64>, Error> {
    let has_meta: bool = conn.query_row(
        "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'retrykey_meta'",
        [],
        |row| row.get(0),
    )?;
    if !has_meta {
        return Ok(None);
    }
    Ok(conn
        .query_row("SELECT version FROM retrykey_meta", [], |row| row.get(0))
        .optional()?)
}

/// Rewrites a version-1 ledger into the version-2 layout, under `scope`.
fn migrate_v1(tx: &rusqlite::Transaction<'_>, scope: &str, now: i64) -> Result<(), Error> {
    tx.execute_batch(
        "ALTER TABLE operations RENAME TO operations_v1;
         ALTER TABLE ledger RENAME TO ledger_v1;",
    )?;
    tx.execute_batch(LAYOUT_V2)?;
    let old: Vec<(String, String, i64, String)> = tx
        .prepare("SELECT key, job, units, receipt FROM operations_v1 ORDER BY key")?
        .query_map([], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })?
        .collect::<Result<_, _>>()?;
    let mut last_operation = 0_i64;
    for (key, job, units, receipt) in &old {
        let (operation, total) = read_v1_receipt(key, receipt)?;
        last_operation = last_operation.max(operation);
        tx.execute(
            "INSERT INTO operations
               (scope, key, job, units, operation, committed_total, schema_version, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                scope,
                key,
                job,
                units,
                operation,
                total,
                SCHEMA_VERSION,
                now
            ],
        )?;
    }
    let total: i64 = tx.query_row("SELECT total FROM ledger_v1", [], |row| row.get(0))?;
    tx.execute(
        "INSERT INTO ledger (scope, total, records, operations) VALUES (?1, ?2, ?3, ?4)",
        params![scope, total, old.len() as i64, last_operation],
    )?;
    tx.execute_batch(
        "DROP TABLE operations_v1;
         DROP TABLE ledger_v1;",
    )?;
    tx.execute("UPDATE retrykey_meta SET version = ?1", [SCHEMA_VERSION])?;
    Ok(())
}

/// Writes a fresh ledger file in the version-1 layout, applying `operations` the way the
/// previous release did. Tests use it to prove that a migrated ledger replays old receipts.
#[doc(hidden)]
pub fn write_v1(path: &Path, operations: &[(Key, Request)]) -> Result<(), Error> {
    let mut conn = Connection::open(path)?;
    let tx = conn.transaction()?;
    tx.execute_batch(LAYOUT_V1)?;
    let (records, total) = v1_records(operations);
    for record in &records {
        tx.execute(
            "INSERT INTO operations (key, job, units, receipt) VALUES (?1, ?2, ?3, ?4)",
            params![record.key, record.job, record.units, record.receipt],
        )?;
    }
    tx.execute("UPDATE ledger SET total = ?1", [total])?;
    tx.commit()?;
    Ok(())
}
