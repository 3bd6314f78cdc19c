//! The outbox's store: what the accepting side, the dispatcher and the operator ask of the
//! document service's database, whichever backend holds it.
//!
//! Every call is async. PostgreSQL awaits its connections on the caller's runtime
//! (`pg/store.rs`); SQLite, whose calls block, runs each on a blocking thread
//! (`sqlite/store.rs`). Code without a runtime of its own (a one-shot program, a test, a load
//! thread) waits for a call with [`wait`].

use std::cell::Cell;
use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;
use std::time::Duration;

use retrykey::{Key, Request};

use crate::{Accepted, Acted, ActionError, Claimed, Error, EventRow};

/// One call of an [`OutboxStore`], boxed so that the trait can be used as `dyn OutboxStore`.
pub type StoreCall<'a, T> = Pin<Box<dyn Future<Output = Result<T, Error>> + Send + 'a>>;

/// What every part of the document service does with its database.
pub trait OutboxStore: Debug + Send + Sync {
    /// Accepts `job` under `key`: the job and its outgoing event commit together; a retry with
    /// the same key answers from the ledger's record and writes nothing.
    fn accept<'a>(&'a self, key: &'a Key, job: &'a Request) -> StoreCall<'a, Accepted>;

    /// The jobs the ledger has accepted (and not yet swept), by number.
    fn jobs(&self) -> StoreCall<'_, Vec<u64>>;

    /// The database's clock, in ms since the Unix epoch: read, never awaited.
    fn now_ms(&self) -> i64;

    /// Claims up to `limit` due events for `owner`, each for `lease`, with a new token.
    fn claim<'a>(
        &'a self,
        owner: &'a str,
        lease: Duration,
        limit: usize,
    ) -> StoreCall<'a, Vec<Claimed>>;

    /// Marks a claimed event delivered, if the claim is still current; false if it was not.
    fn mark_delivered<'a>(
        &'a self,
        claimed: &'a Claimed,
        conversion: Option<u64>,
    ) -> StoreCall<'a, bool>;

    /// Lets a claim go, the event due again after `wait`; false if the claim was not current.
    fn postpone<'a>(
        &'a self,
        claimed: &'a Claimed,
        error: &'a str,
        wait: Duration,
    ) -> StoreCall<'a, bool>;

    /// Settles a claimed event as rejected by the consumer; false if the claim was not current.
    fn mark_rejected<'a>(&'a self, claimed: &'a Claimed, error: &'a str) -> StoreCall<'a, bool>;

    /// The event `id`, as stored.
    fn find<'a>(&'a self, id: &'a str) -> StoreCall<'a, Option<EventRow>>;

    /// Events the consumer has not acknowledged (pending, rejected or failed), oldest first, at
    /// most `limit`.
    fn not_delivered(&self, limit: usize) -> StoreCall<'_, Vec<EventRow>>;

    /// Every event, by job.
    fn events(&self) -> StoreCall<'_, Vec<EventRow>>;

    /// The operator's re-drive of event `id`: due now. The inner result is the answer; the
    /// outer one says whether the database could be asked.
    fn redrive<'a>(&'a self, id: &'a str) -> StoreCall<'a, Result<Acted, ActionError>>;

    /// The operator's decision that event `id` failed, for `reason`.
    fn mark_failed<'a>(
        &'a self,
        id: &'a str,
        reason: &'a str,
    ) -> StoreCall<'a, Result<Acted, ActionError>>;

    /// The retention sweep: deletes the ledger's records past their retention window, then the
    /// delivered and failed events settled more than `kept` ago whose job's record is gone;
    /// returns how many events.
    fn sweep(&self, kept: Duration) -> StoreCall<'_, usize>;
}

thread_local! {
    /// Whether this thread is inside [`wait`], blocked already.
    static WAITING: Cell<bool> = const { Cell::new(false) };
}

/// Whether the calling thread is inside [`wait`]: a backend whose calls block may then run one
/// in place, since no runtime worker is held up by it, instead of handing it to another thread.
pub(crate) fn waiting() -> bool {
    WAITING.get()
}

/// Waits for `call` from code that is not async: on a small runtime of this process's own, so
/// that a store's connections outlive one call. Refused, with nothing called, on a thread that
/// runs async code, where it would stall the runtime.
pub fn wait<T>(call: impl Future<Output = Result<T, Error>>) -> Result<T, Error> {
    static RUNTIME: OnceLock<std::io::Result<tokio::runtime::Runtime>> = OnceLock::new();
    /// Marks the thread as waiting until it is dropped.
    struct Waiting(bool);
    impl Drop for Waiting {
        fn drop(&mut self) {
            WAITING.set(self.0);
        }
    }
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(Error::WaitInAsync);
    }
    let runtime = RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("retrykey-outbox-store")
            .enable_all()
            .build()
    });
    let runtime = runtime
        .as_ref()
        .map_err(|error| Error::Runtime(error.to_string()))?;
    let _waiting = Waiting(WAITING.replace(true));
    runtime.block_on(call)
}
