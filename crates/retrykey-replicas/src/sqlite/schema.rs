//! The SQLite file's tables and connection settings.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::Connection;

/// How long a connection waits for another one's write lock before the store gives up (503).
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The keys, with their lease, token and answer; the counters.
pub(crate) const SCHEMA: &str = "
-- ANCHOR: tables
CREATE TABLE IF NOT EXISTS http_keys (
    entry_id    BLOB PRIMARY KEY,
    fingerprint BLOB NOT NULL,
    token       INTEGER NOT NULL,
    owner       TEXT NOT NULL,
    lease_until INTEGER,           -- in flight: the lease's end, in ms since the epoch
    expires_at  INTEGER,           -- finished: the end of retention; NULL while in flight
    status      INTEGER,
    headers     BLOB,
    body        BLOB,
    whole       INTEGER,
    size        INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS http_keys_expiry ON http_keys (expires_at) WHERE expires_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS http_keys_usage (
    id         INTEGER PRIMARY KEY CHECK (id = 0),
    last_token INTEGER NOT NULL,   -- fencing tokens only grow, across every key
    entries    INTEGER NOT NULL,
    bytes      INTEGER NOT NULL
);
INSERT OR IGNORE INTO http_keys_usage VALUES (0, 0, 0, 0);
-- ANCHOR_END: tables
";

/// Deletes a database file with its write-ahead log and shared-memory index, where present.
pub(crate) fn remove_files(path: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut file = path.as_os_str().to_owned();
        file.push(suffix);
        let _ = std::fs::remove_file(file);
    }
}

/// Opens `path` with the store's settings: WAL, full durability, a busy timeout.
pub(crate) fn connect(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // WAL: readers never block the writer, and a commit is one append to the log.
    while_busy(|| conn.pragma_update(None, "journal_mode", "WAL"))?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    Ok(conn)
}

/// Runs `step` again while another process holds the file, for up to [`BUSY_TIMEOUT`].
///
/// Several replicas started at once open one new file together. Switching it to WAL needs the
/// file to itself, and SQLite answers "database is locked" at once there instead of waiting
/// in its busy handler, so the waiting happens here.
pub(crate) fn while_busy<T>(mut step: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    loop {
        match step() {
            Err(error) if is_busy(&error) && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            result => return result,
        }
    }
}

fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}
