//! The response store in one SQLite file, shared by every process on the machine that opens it.
//!
//! Every write runs in a `BEGIN IMMEDIATE` transaction, in a savepoint of its own (writes that
//! wait meanwhile share the next transaction and its commit): SQLite lets one writer at a time
//! hold the file, across processes, so a claim's look-then-insert cannot interleave with
//! another's.
//! Reads (lookups, and the polling of waiting duplicates) run beside the writer thanks to WAL.

pub mod claim;
mod commit;
pub mod fence;
mod schema;
mod usage;

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use retrykey_http::{EntryId, Error, Fingerprint, Reserve, Token};
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use crate::record::ResponseColumns;
use crate::store::{ClaimTerms, Common, DbEntries, StoreBackend, StoredAnswer};
use crate::wait::EntryRow;
use crate::{FenceSteps, StandardFence, StoreOptions};

pub use usage::Usage;

use schema::{BUSY_TIMEOUT, SCHEMA, connect, remove_files, while_busy};

/// Connections per store: reads run in parallel, writes queue for the file's one write lock.
const CONNECTIONS: usize = 4;

/// Expired records removed by each claim (all of them when the store is full).
const SWEEP_BATCH: i64 = 2;

/// Expired records one write of [`SqliteEntries::sweep`] deletes: a few milliseconds of the
/// file's write lock, about what a claim waits for a shared commit anyway.
const SWEEP_CHUNK: i64 = 100;

/// A [`Entries`](retrykey_http::Entries) in a SQLite file: several processes on one machine,
/// one authority.
///
/// Cloning is cheap and shares the connections.
pub type SqliteEntries = DbEntries<SqliteBackend>;

/// The SQLite side of a [`SqliteEntries`]: its file, and the claim and fence it runs.
pub struct SqliteBackend {
    file: Arc<SqliteFile>,
    common: Common,
    steps: Arc<dyn FenceSteps>,
}

impl std::fmt::Debug for SqliteBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteBackend")
            .field("path", &self.file.path)
            .field("common", &self.common)
            .finish_non_exhaustive()
    }
}

/// The file and its connections, shared with the blocking threads that use them.
struct SqliteFile {
    path: PathBuf,
    /// Delete the file when the last user goes (a throwaway store).
    throwaway: bool,
    connections: Vec<Mutex<Connection>>,
    next: AtomicUsize,
    /// The writes waiting for the next transaction, and whether a thread is running them.
    /// This process's writers queue here instead of in SQLite's busy handler, which sleeps in
    /// steps of milliseconds; writers of other processes still meet on the file's lock.
    writes: Mutex<Writes>,
    /// The transactions committed through this file's handle: [`SqliteEntries::commits`].
    commits: AtomicU64,
}

/// The writes this process has queued: one thread at a time runs all that are waiting in one
/// transaction, each in a savepoint of its own, and commits them together.
#[derive(Default)]
struct Writes {
    waiting: VecDeque<Queued>,
    running: bool,
}

/// A write in the queue, and when it joined it.
struct Queued {
    write: Write,
    since: Instant,
}

/// One queued write: given the shared transaction, it runs there and keeps or undoes its own
/// changes, handing back what reports its outcome once the transaction has ended; given a
/// reason instead, it tells its caller it failed, without running.
type Write = Box<dyn FnOnce(Result<&Transaction<'_>, &str>) -> Ran + Send>;

/// A write that ran: whether its changes stay, and how to report its outcome given the commit's.
struct Ran {
    kept: bool,
    /// SQLite rolled back the whole transaction (a full disk, an I/O error, no memory do):
    /// nothing after it may run in it.
    lost: bool,
    report: Report,
}

/// Tells a write's caller its outcome, given the transaction's: committed, or why not.
type Report = Box<dyn FnOnce(Result<(), &str>) + Send>;

/// At most this many writes share one transaction, so that none waits long behind others.
const WRITES_PER_COMMIT: usize = 64;

impl SqliteEntries {
    /// Opens (creating if needed) the store in the file at `path`.
    pub fn open(path: impl AsRef<Path>, options: StoreOptions) -> Result<Self, Error> {
        Self::open_with_steps(path, options, Arc::new(StandardFence))
    }

    /// A store in a new file in the temporary folder, deleted when the last clone is dropped: a
    /// test knob, compiled only with the `test-support` feature.
    #[cfg(feature = "test-support")]
    pub fn throwaway(options: StoreOptions) -> Result<Self, Error> {
        Self::throwaway_with_steps(options, Arc::new(StandardFence))
    }

    /// The same, with the claim and fence a lab under `labs/` replaces.
    #[cfg(feature = "test-support")]
    #[doc(hidden)]
    pub fn throwaway_with_steps(
        options: StoreOptions,
        steps: Arc<dyn FenceSteps>,
    ) -> Result<Self, Error> {
        let path = std::env::temp_dir().join(format!(
            "retrykey-keys-{}.sqlite",
            crate::store::throwaway_name()
        ));
        remove_files(&path); // left over by an earlier process with the same id
        let mut store = Self::open_with_steps(&path, options, steps)?;
        if let Some(file) =
            Arc::get_mut(&mut store.inner).and_then(|inner| Arc::get_mut(&mut inner.file))
        {
            file.throwaway = true;
        }
        Ok(store)
    }

    /// The same, with the claim and fence a lab under `labs/` replaces.
    #[doc(hidden)]
    pub fn open_with_steps(
        path: impl AsRef<Path>,
        options: StoreOptions,
        steps: Arc<dyn FenceSteps>,
    ) -> Result<Self, Error> {
        let path = path.as_ref().to_path_buf();
        let connections = (0..CONNECTIONS)
            .map(|_| connect(&path).map(Mutex::new))
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(unavailable)?;
        let first = connections[0]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        while_busy(|| first.execute_batch(SCHEMA)).map_err(unavailable)?;
        drop(first);
        Ok(Self {
            inner: Arc::new(SqliteBackend {
                file: Arc::new(SqliteFile {
                    path,
                    throwaway: false,
                    connections,
                    next: AtomicUsize::new(0),
                    writes: Mutex::default(),
                    commits: AtomicU64::new(0),
                }),
                common: Common::new(options),
                steps,
            }),
        })
    }

    /// The file this store lives in.
    pub fn path(&self) -> &Path {
        &self.inner.file.path
    }

    /// How many transactions this store (its clones included) has committed: each is one wait
    /// for the disk, shared by every write in it.
    pub fn commits(&self) -> u64 {
        self.inner.file.commits.load(Ordering::Relaxed)
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
    ///
    /// A sweep never holds the file's write lock for long, however long its backlog: it
    /// deletes [`SWEEP_CHUNK`] records per write, each write queued behind the claims and
    /// completions that arrived meanwhile, so a claim waits for at most one chunk's delete
    /// instead of the whole backlog's (which, past the busy timeout, would fail it). After
    /// each full chunk it leaves the file to the others for as long as the chunk took: the
    /// file has one writer, and a sweep that queued chunk after chunk would take most of its
    /// time from the claims. At half the writer's time it still deletes records many times
    /// faster than a claim adds them.
    pub async fn sweep(&self) -> Result<u64, Error> {
        let now = self.inner.common.options.clock.now_ms();
        let mut swept = 0;
        loop {
            let started = Instant::now();
            let gone = self
                .inner
                .write(move |tx| Usage::sweep(tx, now, SWEEP_CHUNK))
                .await?;
            swept += gone;
            if gone < SWEEP_CHUNK.cast_unsigned() {
                return Ok(swept);
            }
            tokio::time::sleep(started.elapsed()).await;
        }
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
}

/// Who holds a record, as [`SqliteEntries::holder`] reports it.
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

impl Drop for SqliteFile {
    fn drop(&mut self) {
        if self.throwaway {
            // Close the connections first: SQLite removes nothing while they are open.
            self.connections.clear();
            remove_files(&self.path);
        }
    }
}

fn unavailable(error: rusqlite::Error) -> Error {
    Error::StoreUnavailable(format!("sqlite: {error}"))
}

impl SqliteBackend {
    /// Runs `work` on a pooled connection, off the async threads (SQLite calls block).
    async fn read<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, Error> {
        let file = Arc::clone(&self.file);
        blocking(move || file.on_connection(work)).await
    }

    /// Runs `work` in a `BEGIN IMMEDIATE` transaction; its changes are committed if it returns
    /// `Ok`, and undone if it fails. The answer comes once the commit is on disk.
    pub(crate) async fn write<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, Error> {
        self.write_with(work).await.map_err(|undone| match undone {
            Undone::Work(error) => unavailable(error),
            Undone::Store(error) => error,
        })
    }

    /// [`SqliteBackend::write`] for work with an error of its own, which undoes its changes
    /// and comes back as [`Undone::Work`].
    ///
    /// Writes that arrive while another is running wait, and then share one transaction and
    /// one commit (each in a savepoint of its own): what a fresh key pays for most on this
    /// store is the commit's wait for the disk, and one wait can cover several writes. Each
    /// still commits, or fails, as a whole, and is answered only once it is durable.
    pub(crate) async fn write_with<T, E>(
        &self,
        work: impl FnOnce(&Transaction<'_>) -> Result<T, E> + Send + 'static,
    ) -> Result<T, Undone<E>>
    where
        T: Send + 'static,
        E: From<rusqlite::Error> + Send + 'static,
    {
        let (answer, answered) = tokio::sync::oneshot::channel();
        let write: Write = Box::new(move |tx: Result<&Transaction<'_>, &str>| {
            let tx = match tx {
                Ok(tx) => tx,
                Err(why) => {
                    let _ = answer.send(Err(Undone::Store(Error::StoreUnavailable(format!(
                        "sqlite: {why}"
                    )))));
                    return Ran {
                        kept: false,
                        lost: false,
                        report: Box::new(|_| {}),
                    };
                }
            };
            let outcome = savepoint(tx, work);
            let kept = outcome.is_ok();
            let lost = tx.is_autocommit();
            let report: Report = Box::new(move |committed: Result<(), &str>| {
                let outcome = match (outcome, committed) {
                    (Ok(value), Ok(())) => Ok(value),
                    (Err(error), _) => Err(Undone::Work(error)),
                    (Ok(_), Err(error)) => Err(Undone::Store(Error::StoreUnavailable(format!(
                        "sqlite: {error}"
                    )))),
                };
                let _ = answer.send(outcome);
            });
            Ran { kept, lost, report }
        });
        self.enqueue(write);
        answered.await.unwrap_or_else(|_| {
            Err(Undone::Store(Error::StoreUnavailable(
                "sqlite: the write was dropped unfinished".to_owned(),
            )))
        })
    }

    /// Queues `write` for the next transaction, and starts the runner if none is running.
    fn enqueue(&self, write: Write) {
        let lead = {
            let mut writes = self
                .file
                .writes
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            writes.waiting.push_back(Queued {
                write,
                since: Instant::now(),
            });
            !std::mem::replace(&mut writes.running, true)
        };
        if lead {
            // The runner owns the flag from here: if it panics, or the task never runs, its
            // drop clears the flag and fails what waits, so no later write waits for nothing.
            let runner = Runner {
                file: Arc::clone(&self.file),
                done: false,
            };
            tokio::task::spawn_blocking(move || runner.run());
        }
    }
}

/// Why a write kept nothing: its work failed (and its changes were undone), or the store did.
pub(crate) enum Undone<E> {
    Work(E),
    Store(Error),
}

/// Runs `work` in a savepoint of `tx`: released when it succeeds, rolled back when it fails.
fn savepoint<T, E: From<rusqlite::Error>>(
    tx: &Transaction<'_>,
    work: impl FnOnce(&Transaction<'_>) -> Result<T, E>,
) -> Result<T, E> {
    tx.execute_batch("SAVEPOINT write")?;
    match work(tx) {
        Ok(value) => Ok(tx.execute_batch("RELEASE write").map(|()| value)?),
        Err(error) => {
            // Some failures (a full disk, an I/O error) roll back the whole transaction, and
            // the savepoint with it: this then fails too, and the runner sees the transaction
            // gone (`is_autocommit`) and stops the batch.
            let _ = tx.execute_batch("ROLLBACK TO write; RELEASE write");
            Err(error)
        }
    }
}

/// Runs `work` on a blocking thread.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> rusqlite::Result<T> + Send + 'static,
) -> Result<T, Error> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| Error::StoreUnavailable(format!("sqlite task: {error}")))?
        .map_err(unavailable)
}

/// The one thread running this process's queued writes. Blocks.
struct Runner {
    file: Arc<SqliteFile>,
    /// It emptied the queue and cleared the flag itself.
    done: bool,
}

impl Runner {
    /// Runs the queued writes, as many as wait (up to [`WRITES_PER_COMMIT`]) per transaction,
    /// until none is left.
    fn run(mut self) {
        loop {
            let batch = {
                let mut writes = self.file.lock_writes();
                if writes.waiting.is_empty() {
                    writes.running = false;
                    self.done = true;
                    return;
                }
                let take = writes.waiting.len().min(WRITES_PER_COMMIT);
                writes.waiting.drain(..take).collect::<Vec<_>>()
            };
            self.file.run_batch(batch);
        }
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        if !self.done {
            let waiting = {
                let mut writes = self.file.lock_writes();
                writes.running = false;
                std::mem::take(&mut writes.waiting)
            };
            for queued in waiting {
                (queued.write)(Err("the write runner stopped"));
            }
        }
    }
}

impl SqliteFile {
    fn lock_writes(&self) -> std::sync::MutexGuard<'_, Writes> {
        self.writes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `batch` in one transaction and reports to each write. Writes that waited longer
    /// than [`BUSY_TIMEOUT`] fail without running, as a wait on SQLite's own lock would.
    /// Writes not run because the transaction ended early go back to the queue's front.
    fn run_batch(&self, batch: Vec<Queued>) {
        let mut batch = batch.into_iter();
        let mut ran = Vec::with_capacity(batch.len());
        let mut began = false;
        let committed = self.on_connection(|conn| {
            let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
            began = true;
            for Queued { write, since } in batch.by_ref() {
                if since.elapsed() > BUSY_TIMEOUT {
                    write(Err("the write waited too long for the file's lock"));
                    continue;
                }
                // A write that panics takes the whole transaction down with it: the writes
                // that ran in it fail, and those after it wait for the next one.
                match std::panic::catch_unwind(AssertUnwindSafe(|| write(Ok(&tx)))) {
                    Ok(done) => {
                        let lost = done.lost;
                        ran.push(done);
                        if lost {
                            return Ok(Err("the transaction was rolled back by an error"));
                        }
                    }
                    Err(_) => return Ok(Err("a write panicked")),
                }
            }
            if ran.iter().any(|ran| ran.kept) {
                tx.commit()?;
                self.commits.fetch_add(1, Ordering::Relaxed);
                Ok(Ok(()))
            } else {
                tx.rollback().map(Ok)
            }
        });
        let committed = match committed {
            Ok(Ok(())) => Ok(()),
            Ok(Err(why)) => Err(why.to_owned()),
            Err(error) => Err(error.to_string()),
        };
        let unrun: Vec<Queued> = batch.collect();
        if !began {
            // The transaction did not begin (the file stayed locked past the busy timeout):
            // every write queued meanwhile has waited as long, and fails with the reason.
            let waiting = std::mem::take(&mut self.lock_writes().waiting);
            let why = committed.as_ref().err().map_or("", String::as_str);
            for queued in unrun.into_iter().chain(waiting) {
                (queued.write)(Err(why));
            }
        } else if !unrun.is_empty() {
            let mut writes = self.lock_writes();
            for queued in unrun.into_iter().rev() {
                writes.waiting.push_front(queued);
            }
        }
        for Ran { report, .. } in ran {
            report(committed.as_ref().map(|_| ()).map_err(String::as_str));
        }
    }

    /// Runs `work` on a free connection if there is one, from the next in turn on; else waits
    /// for that one. Blocks.
    fn on_connection<T>(
        &self,
        work: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        let count = self.connections.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let free =
            (0..count).find_map(|step| self.connections[(start + step) % count].try_lock().ok());
        let conn = match free {
            Some(conn) => conn,
            None => self.connections[start % count]
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        };
        work(&conn)
    }
}

impl StoreBackend for SqliteBackend {
    fn common(&self) -> &Common {
        &self.common
    }

    async fn row(&self, id: EntryId) -> Result<Option<EntryRow>, Error> {
        self.read(move |conn| {
            conn.prepare_cached(
                "SELECT fingerprint, lease_until, expires_at, status, headers, body, whole, size
                 FROM http_keys WHERE entry_id = ?1",
            )?
            .query_row(params![id.as_bytes()], |row| {
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
                Ok((row.get(0)?, row.get(1)?, row.get(2)?, response))
            })
            .optional()
        })
        .await
    }

    async fn claim(&self, id: EntryId, fingerprint: Fingerprint) -> Result<Reserve, Error> {
        let (options, steps) = (self.common.options.clone(), Arc::clone(&self.steps));
        self.write(move |tx| {
            let terms = ClaimTerms::now(&options);
            Usage::sweep(tx, terms.now_ms, SWEEP_BATCH)?;
            steps.claim(tx, &id, &fingerprint, &terms)
        })
        .await
    }

    async fn renew(&self, id: EntryId, token: Token, until: i64) -> Result<bool, Error> {
        let steps = Arc::clone(&self.steps);
        self.write(move |tx| steps.renew(tx, &id, token, until))
            .await
    }

    async fn finish(&self, id: EntryId, token: Token, answer: StoredAnswer) -> Result<bool, Error> {
        let steps = Arc::clone(&self.steps);
        self.write(move |tx| {
            if steps.holds(tx, &id, token)? {
                steps.finish(tx, &id, &answer.columns, answer.expires_at)?;
                Usage::add_bytes(tx, answer.columns.size)?;
                return Ok(true);
            }
            // A handler that shares this database may have stored the answer itself,
            // in the transaction of its effect (see `commit.rs`): then it is done already.
            finished_by(tx, &id, token)
        })
        .await
    }

    async fn holder(&self, id: EntryId) -> Result<Option<(Token, String)>, Error> {
        self.read(move |conn| {
            conn.prepare_cached(
                "SELECT token, owner FROM http_keys WHERE entry_id = ?1 AND expires_at IS NULL",
            )?
            .query_row(params![id.as_bytes()], |row| {
                Ok((Token(row.get::<_, i64>(0)?.cast_unsigned()), row.get(1)?))
            })
            .optional()
        })
        .await
    }

    async fn release(&self, id: EntryId, token: Token) -> Result<bool, Error> {
        self.write(move |tx| {
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
        .await
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

#[cfg(test)]
mod batch_tests;
