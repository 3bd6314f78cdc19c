//! The shared transaction: writes queued behind a running one share its successor, and each
//! still commits, or fails, on its own; checked on the rows in the file.

use std::sync::mpsc;
use std::time::Duration;

use http::{Method, Uri};
use retrykey_http::{IdempotencyKey, Scope};

use super::*;

/// A store in a new file, deleted with the returned guard.
fn store(name: &str) -> (SqliteEntries, Scratch) {
    let path = std::env::temp_dir().join(format!(
        "retrykey-batch-{name}-{}.sqlite",
        std::process::id()
    ));
    remove_files(&path);
    let store = SqliteEntries::open(&path, StoreOptions::default()).unwrap();
    (store, Scratch(path))
}

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        remove_files(&self.0);
    }
}

/// Holds the write runner inside a write until the returned sender is used: writes queued
/// meanwhile all run in the next transaction.
async fn hold_runner(backend: &Arc<SqliteBackend>) -> (mpsc::Sender<()>, Pending<()>) {
    let (open, gate) = mpsc::channel::<()>();
    let (started, running) = tokio::sync::oneshot::channel();
    let held = spawn_write(backend, move |_tx| {
        let _ = started.send(());
        gate.recv().ok();
        Ok(())
    });
    running.await.unwrap();
    (open, held)
}

type Pending<T> = tokio::task::JoinHandle<Result<T, Error>>;

fn spawn_write<T: Send + 'static>(
    backend: &Arc<SqliteBackend>,
    work: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<T> + Send + 'static,
) -> Pending<T> {
    let backend = Arc::clone(backend);
    tokio::spawn(async move { backend.write(work).await })
}

/// Polls `condition` until it holds; a minute without it is a hang, not a slow machine.
async fn wait_until(what: &str, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !condition() {
        assert!(Instant::now() < deadline, "gave up waiting until {what}");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// Waits until `count` writes are queued behind the held one.
async fn queued(backend: &SqliteBackend, count: usize) {
    wait_until(&format!("{count} writes are queued"), || {
        backend.file.lock_writes().waiting.len() >= count
    })
    .await;
}

async fn keys_in(backend: &SqliteBackend) -> Vec<i64> {
    backend
        .read(|conn| {
            conn.prepare("SELECT k FROM t ORDER BY k")?
                .query_map([], |row| row.get(0))?
                .collect()
        })
        .await
        .unwrap()
}

async fn with_table(name: &str) -> (SqliteEntries, Scratch, Arc<SqliteBackend>) {
    let (store, scratch) = store(name);
    let backend = Arc::clone(&store.inner);
    backend
        .write(|tx| tx.execute_batch("CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)"))
        .await
        .unwrap();
    (store, scratch, backend)
}

fn insert(k: i64) -> impl FnOnce(&Transaction<'_>) -> rusqlite::Result<()> + Send + 'static {
    move |tx| {
        tx.execute("INSERT INTO t VALUES (?1, x'00')", [k])
            .map(drop)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_claims_of_one_key_in_one_batch_reserve_it_once() {
    let (store, _scratch) = store("claims");
    let backend = Arc::clone(&store.inner);
    let id = EntryId::new(&Scope::Anonymous, &IdempotencyKey::parse(b"one").unwrap());
    let fingerprint = Fingerprint::of(
        &Method::POST,
        &Uri::from_static("/pay"),
        &Scope::Anonymous,
        None,
        b"x",
    );
    let commits = store.commits();
    let (open, held) = hold_runner(&backend).await;
    let claims: Vec<_> = (0..2)
        .map(|_| {
            let backend = Arc::clone(&backend);
            tokio::spawn(async move { backend.claim(id, fingerprint).await })
        })
        .collect();
    queued(&backend, 2).await;
    open.send(()).unwrap();
    held.await.unwrap().unwrap();
    let mut reserved = Vec::new();
    let mut taken = 0;
    for claim in claims {
        match claim.await.unwrap().unwrap() {
            Reserve::Reserved(token) => reserved.push(token),
            Reserve::Taken => taken += 1,
            Reserve::Full => panic!("an empty store refused a key"),
        }
    }
    assert_eq!((reserved.len(), taken), (1, 1));
    let holder = store.holder(&id).await.unwrap().expect("the key's record");
    assert_eq!(holder.token, reserved[0]);
    assert!(!holder.finished);
    assert_eq!(store.entries().await.unwrap(), 1);
    // The held write's transaction, then one for both claims.
    assert_eq!(store.commits() - commits, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_write_in_a_batch_changes_nothing_and_the_others_commit() {
    let (_store, _scratch, backend) = with_table("failing").await;
    let (open, held) = hold_runner(&backend).await;
    let first = spawn_write(&backend, insert(1));
    queued(&backend, 1).await;
    let failing = spawn_write(&backend, |tx| {
        tx.execute("INSERT INTO t VALUES (2, x'00')", [])?;
        tx.execute("INSERT INTO t VALUES (1, x'00')", []).map(drop)
    });
    queued(&backend, 2).await;
    let last = spawn_write(&backend, insert(3));
    queued(&backend, 3).await;
    open.send(()).unwrap();
    held.await.unwrap().unwrap();
    first.await.unwrap().unwrap();
    assert!(failing.await.unwrap().is_err());
    last.await.unwrap().unwrap();
    assert_eq!(keys_in(&backend).await, [1, 3]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_write_fails_its_batch_and_the_store_goes_on() {
    let (_store, _scratch, backend) = with_table("panic").await;
    let (open, held) = hold_runner(&backend).await;
    let before = spawn_write(&backend, insert(1));
    queued(&backend, 1).await;
    let panics = spawn_write(&backend, |tx| -> rusqlite::Result<()> {
        tx.execute("INSERT INTO t VALUES (2, x'00')", [])?;
        panic!("a write that panics")
    });
    queued(&backend, 2).await;
    let after = spawn_write(&backend, insert(3));
    queued(&backend, 3).await;
    open.send(()).unwrap();
    held.await.unwrap().unwrap();
    assert!(
        before.await.unwrap().is_err(),
        "its transaction never committed"
    );
    assert!(panics.await.unwrap().is_err());
    // Not run in the broken transaction: it runs in the next one.
    after.await.unwrap().unwrap();
    assert_eq!(keys_in(&backend).await, [3]);
    backend.write(insert(4)).await.unwrap();
    assert_eq!(keys_in(&backend).await, [3, 4]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_ends_the_batch_and_no_write_is_told_wrong() {
    let (_store, _scratch, backend) = with_table("full").await;
    let (open, held) = hold_runner(&backend).await;
    let before = spawn_write(&backend, insert(1));
    queued(&backend, 1).await;
    // SQLITE_FULL on a write rolls back the whole transaction, not only the statement.
    let full = spawn_write(&backend, |tx| {
        let pages: i64 = tx.query_row("PRAGMA page_count", [], |row| row.get(0))?;
        tx.execute_batch(&format!("PRAGMA max_page_count = {}", pages + 1))?;
        tx.execute("INSERT INTO t VALUES (2, zeroblob(100000))", [])
            .map(drop)
    });
    queued(&backend, 2).await;
    let after = spawn_write(&backend, |tx| {
        tx.execute_batch("PRAGMA max_page_count = 1073741823")?;
        insert(3)(tx)
    });
    queued(&backend, 3).await;
    open.send(()).unwrap();
    held.await.unwrap().unwrap();
    let full = full.await.unwrap();
    assert!(full.is_err(), "{full:?}");
    // The write before it was rolled back with the transaction, and is told so; the one after
    // runs in a transaction of its own and commits.
    assert!(before.await.unwrap().is_err());
    after.await.unwrap().unwrap();
    assert_eq!(keys_in(&backend).await, [3]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_that_waited_past_the_busy_timeout_fails_without_running() {
    let (_store, _scratch, backend) = with_table("stale").await;
    let (open, held) = hold_runner(&backend).await;
    let stale = spawn_write(&backend, insert(1));
    queued(&backend, 1).await;
    backend.file.lock_writes().waiting[0].since -= BUSY_TIMEOUT + Duration::from_secs(1);
    let fresh = spawn_write(&backend, insert(2));
    queued(&backend, 2).await;
    open.send(()).unwrap();
    held.await.unwrap().unwrap();
    assert!(stale.await.unwrap().is_err());
    fresh.await.unwrap().unwrap();
    assert_eq!(keys_in(&backend).await, [2]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runner_that_never_runs_fails_the_queue_and_frees_the_next() {
    let (_store, _scratch, backend) = with_table("never").await;
    let (answer, answered) = tokio::sync::oneshot::channel();
    {
        let mut writes = backend.file.lock_writes();
        writes.running = true;
        writes.waiting.push_back(Queued {
            write: Box::new(move |tx: Result<&Transaction<'_>, &str>| {
                let _ = answer.send(tx.is_ok());
                Ran {
                    kept: false,
                    lost: false,
                    report: Box::new(|_| {}),
                }
            }),
            since: Instant::now(),
        });
    }
    drop(Runner {
        file: Arc::clone(&backend.file),
        done: false,
    });
    assert!(!answered.await.unwrap(), "told it failed, not run");
    assert!(!backend.file.lock_writes().running);
    backend.write(insert(5)).await.unwrap();
    assert_eq!(keys_in(&backend).await, [5]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_locked_past_the_busy_timeout_fails_the_queue_with_why() {
    let (store, _scratch, backend) = with_table("busy").await;
    // Another process's writer, holding the file's write lock.
    let other = Connection::open(store.path()).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    let first = spawn_write(&backend, insert(1));
    // The runner takes `first` and waits in BEGIN for the busy timeout; `second` queues behind
    // it. On a machine so loaded that this test is not polled for that long, the runner gives
    // up first and `second` waits on its own, failing for the same reason: both waits end.
    wait_until("the runner takes the first write", || {
        let writes = backend.file.lock_writes();
        first.is_finished() || (writes.running && writes.waiting.is_empty())
    })
    .await;
    let second = spawn_write(&backend, insert(2));
    wait_until("the second write queues or ends", || {
        second.is_finished() || !backend.file.lock_writes().waiting.is_empty()
    })
    .await;
    for failed in [first.await.unwrap(), second.await.unwrap()] {
        match failed {
            Err(Error::StoreUnavailable(why)) => assert!(why.contains("locked"), "{why}"),
            other => panic!("expected the lock's error, got {other:?}"),
        }
    }
    other.execute_batch("ROLLBACK").unwrap();
    backend.write(insert(3)).await.unwrap();
    assert_eq!(keys_in(&backend).await, [3]);
}
