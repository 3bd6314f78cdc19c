//! The response store in one SQLite file, shared by every process on the machine that opens it.
//!
//! Every write is one `BEGIN IMMEDIATE` transaction: SQLite lets one writer at a time hold the
//! file, across processes, so a claim's look-then-insert cannot interleave with another's.
//! Reads (lookups, and the polling of waiting duplicates) run beside the writer thanks to WAL.

pub mod book;
pub mod claim;
pub mod fence;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use retrykey_http::{
    EntryId, Error, Fingerprint, Lookup, Reserve, ResponseStore, StoreFuture, StoreLimits,
    StoredResponse, Token,
};
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use crate::crash::{Point, at};
use crate::lease::millis;
use crate::record::ResponseColumns;
use crate::wait::Seen;
use crate::{Options, Parts};

pub use book::SqliteBook;

/// How long a connection waits for another one's write lock before the store gives up (503).
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Connections per store: reads run in parallel, writes queue for the file's one write lock.
const CONNECTIONS: usize = 4;

/// Expired records removed by each claim (all of them when the store is full).
const SWEEP_BATCH: i64 = 2;

const SCHEMA: &str = "
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
CREATE TABLE IF NOT EXISTS payments (
    number   INTEGER PRIMARY KEY AUTOINCREMENT,
    amount   INTEGER NOT NULL,
    entry_id BLOB,                 -- the key it was charged under, if any
    token    INTEGER
);
";

/// A [`ResponseStore`] in a SQLite file: several processes on one machine, one authority.
///
/// Cloning is cheap and shares the connections.
#[derive(Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
}

pub(crate) struct Inner {
    path: PathBuf,
    /// Delete the file when the last clone goes (a throwaway store).
    throwaway: bool,
    options: Options,
    parts: Parts,
    connections: Vec<Mutex<Connection>>,
    next: AtomicUsize,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.inner.path)
            .field("options", &self.inner.options)
            .finish_non_exhaustive()
    }
}

/// What a claim needs besides the row: who claims, for how long, and the bounds.
#[doc(hidden)]
pub struct Claim<'a> {
    pub now_ms: i64,
    pub lease_ms: i64,
    pub owner: &'a str,
    pub limits: StoreLimits,
}

impl Claim<'_> {
    /// Whether a new entry must be refused: checked after sweeping everything expired, so a
    /// record is refused only when every record held is live.
    pub fn is_full(&self, tx: &Transaction<'_>) -> rusqlite::Result<bool> {
        if !Usage::read(tx)?.is_full(self.limits) {
            return Ok(false);
        }
        Usage::sweep(tx, self.now_ms, i64::MAX)?;
        Ok(Usage::read(tx)?.is_full(self.limits))
    }
}

/// The one-row table that counts entries and bytes and hands out tokens.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct Usage {
    entries: i64,
    bytes: i64,
}

impl Usage {
    fn read(tx: &Transaction<'_>) -> rusqlite::Result<Self> {
        tx.prepare_cached("SELECT entries, bytes FROM http_keys_usage WHERE id = 0")?
            .query_row([], |row| {
                Ok(Self {
                    entries: row.get(0)?,
                    bytes: row.get(1)?,
                })
            })
    }

    fn is_full(self, limits: StoreLimits) -> bool {
        limits.is_full(
            usize::try_from(self.entries).unwrap_or(usize::MAX),
            usize::try_from(self.bytes).unwrap_or(usize::MAX),
        )
    }

    /// A token higher than every token handed out before, by any process.
    pub fn next_token(tx: &Transaction<'_>) -> rusqlite::Result<i64> {
        tx.prepare_cached(
            "UPDATE http_keys_usage SET last_token = last_token + 1 WHERE id = 0
             RETURNING last_token",
        )?
        .query_row([], |row| row.get(0))
    }

    /// Counts one more entry.
    pub fn add_entry(tx: &Transaction<'_>) -> rusqlite::Result<()> {
        tx.prepare_cached("UPDATE http_keys_usage SET entries = entries + 1 WHERE id = 0")?
            .execute([])?;
        Ok(())
    }

    /// Deletes the entry `id`, whatever its state, and uncounts it.
    pub fn forget(tx: &Transaction<'_>, id: &EntryId) -> rusqlite::Result<()> {
        let size: Option<i64> = tx
            .prepare_cached("DELETE FROM http_keys WHERE entry_id = ?1 RETURNING size")?
            .query_row(params![id.as_bytes()], |row| row.get(0))
            .optional()?;
        if let Some(size) = size {
            Self::uncount(tx, 1, size)?;
        }
        Ok(())
    }

    /// Deletes up to `limit` finished entries past their retention; returns how many went.
    pub fn sweep(tx: &Transaction<'_>, now_ms: i64, limit: i64) -> rusqlite::Result<u64> {
        let (count, bytes): (i64, i64) = tx
            .prepare_cached(
                "SELECT count(*), coalesce(sum(size), 0) FROM (
                     SELECT size FROM http_keys
                     WHERE expires_at IS NOT NULL AND expires_at <= ?1 LIMIT ?2)",
            )?
            .query_row(params![now_ms, limit], |row| Ok((row.get(0)?, row.get(1)?)))?;
        if count > 0 {
            tx.prepare_cached(
                "DELETE FROM http_keys WHERE entry_id IN (
                     SELECT entry_id FROM http_keys
                     WHERE expires_at IS NOT NULL AND expires_at <= ?1 LIMIT ?2)",
            )?
            .execute(params![now_ms, limit])?;
            Self::uncount(tx, count, bytes)?;
        }
        Ok(count.cast_unsigned())
    }

    fn uncount(tx: &Transaction<'_>, entries: i64, bytes: i64) -> rusqlite::Result<()> {
        tx.prepare_cached(
            "UPDATE http_keys_usage SET entries = entries - ?1, bytes = bytes - ?2 WHERE id = 0",
        )?
        .execute(params![entries, bytes])?;
        Ok(())
    }

    fn add_bytes(tx: &Transaction<'_>, bytes: i64) -> rusqlite::Result<()> {
        tx.prepare_cached("UPDATE http_keys_usage SET bytes = bytes + ?1 WHERE id = 0")?
            .execute(params![bytes])?;
        Ok(())
    }
}

impl SqliteStore {
    /// Opens (creating if needed) the store in the file at `path`.
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Self, Error> {
        Self::open_with_parts(path, options, Parts::standard())
    }

    /// A store in a new file in the temporary folder, deleted when the last clone is dropped:
    /// for tests and demos.
    pub fn throwaway(options: Options) -> Result<Self, Error> {
        Self::throwaway_with_parts(options, Parts::standard())
    }

    /// The same, with the claim and fence a lab under `labs/` replaces.
    #[doc(hidden)]
    pub fn throwaway_with_parts(options: Options, parts: Parts) -> Result<Self, Error> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "retrykey-keys-{}-{}.sqlite",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        remove_files(&path); // left over by an earlier process with the same id
        let mut store = Self::open_with_parts(&path, options, parts)?;
        if let Some(inner) = Arc::get_mut(&mut store.inner) {
            inner.throwaway = true;
        }
        Ok(store)
    }

    /// The same, with the claim and fence a lab under `labs/` replaces.
    #[doc(hidden)]
    pub fn open_with_parts(
        path: impl AsRef<Path>,
        options: Options,
        parts: Parts,
    ) -> Result<Self, Error> {
        let path = path.as_ref().to_path_buf();
        let connections = (0..CONNECTIONS)
            .map(|_| connect(&path).map(Mutex::new))
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(unavailable)?;
        connections[0]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .execute_batch(SCHEMA)
            .map_err(unavailable)?;
        Ok(Self {
            inner: Arc::new(Inner {
                path,
                throwaway: false,
                options,
                parts,
                connections,
                next: AtomicUsize::new(0),
            }),
        })
    }

    /// The file this store lives in.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The options it was opened with.
    pub fn options(&self) -> &Options {
        &self.inner.options
    }

    /// How many entries are held (running and finished, expired ones not yet swept included).
    pub async fn entries(&self) -> Result<u64, Error> {
        self.inner
            .read(|conn| {
                conn.query_row("SELECT entries FROM http_keys_usage", [], |row| row.get(0))
            })
            .await
            .map(i64::cast_unsigned)
    }

    /// Deletes every finished entry past its retention; returns how many went. Claims do this
    /// too, a few at a time, and all of it before refusing a key for lack of room.
    pub async fn sweep(&self) -> Result<u64, Error> {
        let now = self.inner.options.clock.now_ms();
        self.inner
            .write(move |tx| Usage::sweep(tx, now, i64::MAX))
            .await
    }

    /// The lease, token and owner of `id`'s record, if any: what an operator asks first about a
    /// key that seems stuck.
    pub async fn holder(&self, id: &EntryId) -> Result<Option<Holder>, Error> {
        let id = *id;
        self.inner
            .read(move |conn| {
                conn.prepare_cached(
                    "SELECT token, owner, lease_until, expires_at IS NOT NULL FROM http_keys
                     WHERE entry_id = ?1",
                )?
                .query_row(params![id.as_bytes()], |row| {
                    Ok(Holder {
                        token: Token(row.get::<_, i64>(0)?.cast_unsigned()),
                        owner: row.get(1)?,
                        lease_until_ms: row.get(2)?,
                        finished: row.get(3)?,
                    })
                })
                .optional()
            })
            .await
    }

    pub(crate) fn inner(&self) -> &Arc<Inner> {
        &self.inner
    }
}

/// Who holds a record, as [`SqliteStore::holder`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// The current fencing token.
    pub token: Token,
    /// The replica that claimed it last.
    pub owner: String,
    /// When its lease ends (in flight only), in ms since the epoch.
    pub lease_until_ms: Option<i64>,
    /// Whether its answer is stored.
    pub finished: bool,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if self.throwaway {
            // Close the connections first: SQLite removes nothing while they are open.
            self.connections.clear();
            remove_files(&self.path);
        }
    }
}

/// Deletes a database file with its write-ahead log and shared-memory index, where present.
fn remove_files(path: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut file = path.as_os_str().to_owned();
        file.push(suffix);
        let _ = std::fs::remove_file(file);
    }
}

fn connect(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // WAL: readers never block the writer, and a commit is one append to the log.
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    Ok(conn)
}

fn unavailable(error: rusqlite::Error) -> Error {
    Error::StoreUnavailable(format!("sqlite: {error}"))
}

impl Inner {
    /// Runs `work` on a pooled connection, off the async threads (SQLite calls block).
    async fn read<T: Send + 'static>(
        self: &Arc<Self>,
        work: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, Error> {
        let inner = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            let slot = inner.next.fetch_add(1, Ordering::Relaxed) % inner.connections.len();
            let conn = inner.connections[slot]
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            work(&conn)
        })
        .await
        .map_err(|error| Error::StoreUnavailable(format!("sqlite task: {error}")))?
        .map_err(unavailable)
    }

    /// Runs `work` in one `BEGIN IMMEDIATE` transaction and commits it if it returns `Ok`.
    pub(crate) async fn write<T: Send + 'static>(
        self: &Arc<Self>,
        work: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, Error> {
        self.read(move |conn| {
            // `read` hands out a shared reference; the transaction needs `&mut`. Each slot is
            // behind its own mutex, so a fresh unchecked transaction on it is exclusive.
            let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
            let value = work(&tx)?;
            tx.commit()?;
            Ok(value)
        })
        .await
    }

    pub(crate) fn parts(&self) -> &Parts {
        &self.parts
    }

    pub(crate) fn options(&self) -> &Options {
        &self.options
    }

    /// What is known about `id` now, read in one statement.
    async fn seen(self: &Arc<Self>, id: EntryId) -> Result<Seen, Error> {
        let now = self.options.clock.now_ms();
        let row = self
            .read(move |conn| {
                conn.prepare_cached(
                    "SELECT fingerprint, lease_until, expires_at, status, headers, body, whole, size
                     FROM http_keys WHERE entry_id = ?1",
                )?
                .query_row(params![id.as_bytes()], |row| {
                    let fingerprint: Vec<u8> = row.get(0)?;
                    let lease_until: Option<i64> = row.get(1)?;
                    let expires_at: Option<i64> = row.get(2)?;
                    let response = match row.get::<_, Option<i32>>(3)? {
                        Some(status) => Some(ResponseColumns {
                            status,
                            headers: row.get(4)?,
                            body: row.get(5)?,
                            whole: row.get(6)?,
                            size: row.get(7)?,
                        }),
                        None => None,
                    };
                    Ok((fingerprint, lease_until, expires_at, response))
                })
                .optional()
            })
            .await?;
        Seen::from_row(row, now)
    }

    /// Keeps the lease of the attempt holding `token` alive while it runs, within the lease's
    /// `max_hold`. Stops as soon as a renewal changes nothing (the attempt ended or lost the key).
    fn keep_renewing(self: &Arc<Self>, id: EntryId, token: Token) {
        let inner = Arc::clone(self);
        let lease = self.options.lease;
        tokio::spawn(async move {
            let started = Instant::now();
            loop {
                tokio::time::sleep(lease.renew_every()).await;
                if started.elapsed() + lease.duration > lease.max_hold {
                    break; // the lease lapses on its own; a stuck handler does not hold the key
                }
                let until = inner.options.clock.now_ms() + millis(lease.duration);
                let renew = inner.parts.renew;
                match inner.write(move |tx| renew(tx, &id, token, until)).await {
                    Ok(true) => {}
                    Ok(false) => break,
                    Err(error) => tracing::warn!(entry = ?id, %error, "lease renewal failed"),
                }
            }
        });
    }
}

impl ResponseStore for SqliteStore {
    fn lookup<'a>(&'a self, id: &'a EntryId) -> StoreFuture<'a, Lookup> {
        StoreFuture::new(async move {
            let seen = self.inner.seen(*id).await?;
            let inner = Arc::clone(&self.inner);
            let id = *id;
            Ok(seen.into_lookup(move || {
                let inner = Arc::clone(&inner);
                async move { inner.seen(id).await }
            }))
        })
    }

    fn reserve<'a>(
        &'a self,
        id: &'a EntryId,
        fingerprint: &'a Fingerprint,
    ) -> StoreFuture<'a, Reserve> {
        StoreFuture::new(async move {
            let (id, fingerprint) = (*id, *fingerprint);
            let options = self.inner.options.clone();
            let claim_fn = self.inner.parts.claim;
            let reserve = self
                .inner
                .write(move |tx| {
                    let now_ms = options.clock.now_ms();
                    Usage::sweep(tx, now_ms, SWEEP_BATCH)?;
                    let claim = Claim {
                        now_ms,
                        lease_ms: millis(options.lease.duration),
                        owner: &options.owner,
                        limits: options.limits,
                    };
                    claim_fn(tx, &id, &fingerprint, &claim)
                })
                .await?;
            if let Reserve::Reserved(token) = reserve {
                self.inner.keep_renewing(id, token);
                at(Point::Reserved);
            }
            Ok(reserve)
        })
    }

    fn complete<'a>(
        &'a self,
        id: &'a EntryId,
        token: Token,
        response: StoredResponse,
    ) -> StoreFuture<'a, ()> {
        StoreFuture::new(async move {
            let id = *id;
            let columns = ResponseColumns::of(&response);
            let expires_at =
                self.inner.options.clock.now_ms() + millis(self.inner.options.limits.retention);
            let parts = self.inner.parts;
            let done = self
                .inner
                .write(move |tx| {
                    if (parts.holds)(tx, &id, token)? {
                        (parts.finish)(tx, &id, &columns, expires_at)?;
                        Usage::add_bytes(tx, columns.size)?;
                        return Ok(true);
                    }
                    // A handler that shares this database may have stored the answer itself,
                    // in the transaction of its effect (see `book.rs`): then it is done already.
                    finished_by(tx, &id, token)
                })
                .await?;
            if done { Ok(()) } else { Err(Error::NotOwner) }
        })
    }

    fn release<'a>(&'a self, id: &'a EntryId, token: Token) -> StoreFuture<'a, ()> {
        StoreFuture::new(async move {
            let id = *id;
            let released = self
                .inner
                .write(move |tx| {
                    let deleted = tx
                        .prepare_cached(
                            "DELETE FROM http_keys
                             WHERE entry_id = ?1 AND token = ?2 AND expires_at IS NULL",
                        )?
                        .execute(params![id.as_bytes(), token.0.cast_signed()])?;
                    if deleted == 1 {
                        Usage::uncount(tx, 1, 0)?;
                    }
                    Ok(deleted == 1)
                })
                .await?;
            if released {
                Ok(())
            } else {
                Err(Error::NotOwner)
            }
        })
    }
}

/// Whether `id` is finished under `token` (its answer was stored with that very token).
fn finished_by(tx: &Transaction<'_>, id: &EntryId, token: Token) -> rusqlite::Result<bool> {
    let found: Option<i64> = tx
        .prepare_cached(
            "SELECT token FROM http_keys WHERE entry_id = ?1 AND expires_at IS NOT NULL",
        )?
        .query_row(params![id.as_bytes()], |row| row.get(0))
        .optional()?;
    Ok(found == Some(token.0.cast_signed()))
}
