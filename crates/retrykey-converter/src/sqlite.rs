//! SQLite: one file in WAL mode, one connection, and the seam through which a lab replaces the
//! dedup transaction.
//!
//! The transaction itself lives in [`convert`](crate::convert), one file, so that the lab
//! `labs/consumer-without-dedup` can copy it whole and change one thing; `ConvertSteps`
//! (`steps.rs`) is where that copy plugs in.

use std::path::Path;
use std::sync::{Mutex, PoisonError};

use retrykey_durable::Durability;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

use crate::rows::{ConversionRow, Converted, ProcessedRow, unix_ms};
use crate::steps::ConvertSteps;
use retrykey_wire::ConversionRequest;

use crate::Error;

/// The two tables: the effect (`conversions`) and the dedup record (`processed`).
///
/// `conversions.event_id` has no unique constraint on purpose: the `processed` record is the
/// only thing that stops a second conversion, so a consumer without it really converts twice.
pub const SCHEMA: &str = "
-- ANCHOR: tables
CREATE TABLE IF NOT EXISTS conversions (
    number INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id TEXT NOT NULL,
    job TEXT NOT NULL,
    units INTEGER NOT NULL,
    converted_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS processed (
    event_id TEXT PRIMARY KEY,
    conversion INTEGER NOT NULL
);
-- ANCHOR_END: tables
";

/// The consumer's tables in one SQLite file.
///
/// One connection, behind a mutex: deliveries to one process take turns, and `BEGIN IMMEDIATE`
/// with a busy timeout makes other processes on the same file take turns with them.
pub struct SqliteConverter {
    conn: Mutex<Connection>,
    steps: &'static dyn ConvertSteps,
}

impl std::fmt::Debug for SqliteConverter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteConverter").finish_non_exhaustive()
    }
}

impl SqliteConverter {
    /// Opens (or creates) `path` with WAL and a busy timeout, and creates the tables.
    pub fn open_with_steps(path: &Path, steps: &'static dyn ConvertSteps) -> Result<Self, Error> {
        let conn = retrykey_durable::sqlite::connect(path, Durability::Full)?;
        conn.execute_batch(SCHEMA)?;
        Ok(Self {
            conn: Mutex::new(conn),
            steps,
        })
    }

    /// Runs the dedup transaction for `request` and commits it.
    pub fn convert(&self, request: &ConversionRequest) -> Result<Converted, Error> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let converted = self.steps.convert(&tx, request, unix_ms())?;
        tx.commit()?;
        Ok(converted)
    }

    /// How many conversions are stored.
    pub fn count(&self) -> Result<u64, Error> {
        let count: i64 = self
            .lock()
            .query_row("SELECT count(*) FROM conversions", [], |row| row.get(0))?;
        Ok(count.cast_unsigned())
    }

    /// Every conversion, by number.
    pub fn list(&self) -> Result<Vec<ConversionRow>, Error> {
        let conn = self.lock();
        let mut statement = conn.prepare(
            "SELECT number, event_id, job, units, converted_at FROM conversions ORDER BY number",
        )?;
        let rows = statement.query_map([], |row| {
            Ok(ConversionRow {
                number: row.get::<_, i64>(0)?.cast_unsigned(),
                event: row.get(1)?,
                job: row.get(2)?,
                units: row.get::<_, i64>(3)?.cast_unsigned(),
                converted_at_ms: row.get(4)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The `processed` records of those of `events` that exist, by event id.
    pub fn processed(&self, events: &[String]) -> Result<Vec<ProcessedRow>, Error> {
        let conn = self.lock();
        let mut statement = conn.prepare_cached(
            "SELECT p.event_id, p.conversion, c.converted_at
             FROM processed p JOIN conversions c ON c.number = p.conversion
             WHERE p.event_id = ?1",
        )?;
        let mut found = Vec::new();
        for event in events {
            let row = statement
                .query_row([event], |row| {
                    Ok(ProcessedRow {
                        event: row.get(0)?,
                        conversion: row.get::<_, i64>(1)?.cast_unsigned(),
                        converted_at_ms: row.get(2)?,
                    })
                })
                .optional()?;
            found.extend(row);
        }
        found.sort_by(|a, b| a.event.cmp(&b.event));
        Ok(found)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic inside a transaction dropped it, which rolled it back: the connection is
        // still usable.
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
