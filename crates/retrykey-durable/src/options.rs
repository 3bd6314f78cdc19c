//! How a durable ledger is opened: its scope, limits, retention window and commit settings.

use std::time::Duration;

use retrykey::Limits;

use crate::crash::Hooks;

/// How long records are kept by default: one day, longer than any client's retry horizon in
/// this lab. Choose it from the longest delay after which a client may still retry.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(24 * 60 * 60);

/// How hard SQLite works to make a commit survive a power cut (not just a process crash).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Durability {
    /// `synchronous = FULL`: the write-ahead log is flushed to disk at every commit. An
    /// acknowledged operation survives a crash of the process *and* of the machine.
    #[default]
    Full,
    /// `synchronous = NORMAL`: the log is flushed at checkpoints only. An acknowledged operation
    /// survives a crash of the process, but a power cut may lose the last commits — and with
    /// them receipts that clients were already given.
    Normal,
}

/// Settings shared by both backends.
#[derive(Clone, Debug)]
pub struct LedgerOptions {
    /// The identity space of the keys: one account or tenant. Keys are unique per scope, and
    /// each scope has its own total and limits.
    pub scope: String,
    /// Capacity and ceiling, with their Stage 1 meaning.
    pub limits: Limits,
    /// How long a record is guaranteed to be kept; the sweeper deletes older ones.
    pub retention: Duration,
    /// SQLite only: the commit setting.
    pub durability: Durability,
    /// PostgreSQL only: the database schema (namespace) that holds the tables.
    pub pg_schema: String,
    /// PostgreSQL only: how many connections one ledger handle keeps open.
    pub pg_connections: usize,
    /// PostgreSQL only: the `application_name` of those connections, to find them on the server.
    pub pg_application_name: String,
    /// Where the crash points call out; empty by default. A seam for the crash checks.
    #[doc(hidden)]
    pub hooks: Hooks,
}

impl Default for LedgerOptions {
    fn default() -> Self {
        Self {
            scope: "default".to_owned(),
            limits: Limits::default(),
            retention: DEFAULT_RETENTION,
            durability: Durability::Full,
            pg_schema: "retrykey".to_owned(),
            pg_connections: 4,
            pg_application_name: "retrykey".to_owned(),
            hooks: Hooks::none(),
        }
    }
}

impl LedgerOptions {
    /// The creation time (Unix seconds) before which a record has outlived the retention window
    /// at `now`. A window longer than the clock can count keeps everything.
    ///
    /// ```
    /// use std::time::{Duration, UNIX_EPOCH};
    /// use retrykey_durable::LedgerOptions;
    ///
    /// let now = UNIX_EPOCH + Duration::from_secs(1_000);
    /// let day = LedgerOptions { retention: Duration::from_secs(600), ..LedgerOptions::default() };
    /// assert_eq!(day.sweep_cutoff(now), 400);
    /// let forever = LedgerOptions { retention: Duration::MAX, ..LedgerOptions::default() };
    /// assert_eq!(forever.sweep_cutoff(now), 1_000 - i64::MAX);
    /// ```
    pub fn sweep_cutoff(&self, now: std::time::SystemTime) -> i64 {
        let window = i64::try_from(self.retention.as_secs()).unwrap_or(i64::MAX);
        unix_seconds(now).saturating_sub(window)
    }

    /// The default options with the given limits.
    pub fn with_limits(limits: Limits) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }
}

/// Seconds since the Unix epoch, as stored in the records' creation time.
pub fn unix_seconds(time: std::time::SystemTime) -> i64 {
    match time.duration_since(std::time::UNIX_EPOCH) {
        Ok(since) => i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
        Err(before) => -i64::try_from(before.duration().as_secs()).unwrap_or(i64::MAX),
    }
}
