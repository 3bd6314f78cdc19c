//! The response store's contract: look up, reserve, complete, release — small enough for a database.
//!
//! The layer never asks a store to "check and insert" in one call it cannot keep atomic:
//! [`Entries::reserve`] itself must refuse a key that is already taken (an insert that
//! fails on a unique constraint, in SQL terms). The layer handles a refused reservation as a
//! lost race: it looks again and waits for, or replays, the winner.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::{EntryId, Error, Fingerprint, StoredResponse};

/// What a store operation returns: an answer already known (the in-memory store answers at
/// once, and then nothing is allocated) or a boxed future (a database round trip). One
/// concrete type, so the trait stays object-safe.
pub struct EntriesFuture<'a, T>(State<'a, T>);

enum State<'a, T> {
    Ready(Option<Result<T, Error>>),
    Pending(Pin<Box<dyn Future<Output = Result<T, Error>> + Send + 'a>>),
}

impl<'a, T> EntriesFuture<'a, T> {
    /// An answer known at once.
    pub fn ready(result: Result<T, Error>) -> Self {
        Self(State::Ready(Some(result)))
    }

    /// An answer that needs waiting for.
    pub fn new(future: impl Future<Output = Result<T, Error>> + Send + 'a) -> Self {
        Self(State::Pending(Box::pin(future)))
    }

    /// Shows the answer to `f` when it comes, and passes it on: at once, with nothing
    /// allocated, when it is known already.
    pub fn inspect(self, f: impl FnOnce(&Result<T, Error>) + Send + 'a) -> Self
    where
        T: 'a,
    {
        self.map(move |answer| {
            f(&answer);
            answer
        })
    }

    /// The answer passed through `f`: at once, with nothing allocated, when it is known
    /// already; else once it arrives.
    pub fn map<U: 'a>(
        self,
        f: impl FnOnce(Result<T, Error>) -> Result<U, Error> + Send + 'a,
    ) -> EntriesFuture<'a, U>
    where
        T: 'a,
    {
        match self.0 {
            State::Ready(answer) => {
                EntriesFuture::ready(f(answer.expect("EntriesFuture mapped after it finished")))
            }
            State::Pending(future) => EntriesFuture::new(async move { f(future.await) }),
        }
    }
}

// The answer is only ever moved out whole, never pinned in place.
impl<T> Unpin for EntriesFuture<'_, T> {}

impl<T> Future for EntriesFuture<'_, T> {
    type Output = Result<T, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.get_mut().0 {
            State::Ready(answer) => Poll::Ready(
                answer
                    .take()
                    .expect("EntriesFuture polled after it finished"),
            ),
            State::Pending(future) => future.as_mut().poll(cx),
        }
    }
}

impl<T> fmt::Debug for EntriesFuture<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EntriesFuture")
    }
}

/// Where the layer keeps one record per (caller, key).
///
/// Implementations: [`crate::MemoryEntries`] here; SQLite and PostgreSQL tables shared by
/// replicas in `retrykey-replicas`.
pub trait Entries: Send + Sync + 'static {
    /// What is known about an entry right now.
    fn lookup<'a>(&'a self, id: &'a EntryId) -> EntriesFuture<'a, Lookup>;

    /// Claims an absent entry for a first attempt. Must answer [`Reserve::Taken`] if any live
    /// entry exists for `id`, checked in the same atomic step as the insertion.
    fn reserve<'a>(
        &'a self,
        id: &'a EntryId,
        fingerprint: &'a Fingerprint,
    ) -> EntriesFuture<'a, Reserve>;

    /// Records the outcome of the attempt holding `token`, and wakes whoever waits for it.
    fn complete<'a>(
        &'a self,
        id: &'a EntryId,
        token: Token,
        response: StoredResponse,
    ) -> EntriesFuture<'a, ()>;

    /// Forgets the entry held by `token` (its attempt failed), and wakes whoever waits for it.
    fn release<'a>(&'a self, id: &'a EntryId, token: Token) -> EntriesFuture<'a, ()>;
}

/// Proof of a reservation: completion and release must present it.
///
/// Tokens only ever grow, across every key of a store: a reservation made later, or a takeover
/// of an abandoned one, always holds a higher token than any before it. A database store uses
/// it as a fencing token and refuses a write that carries an older one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Token(pub u64);

/// The reservation a first attempt runs under, which the handler reads with
/// [`Reservation::current`].
///
/// A handler whose effect lives in the same database as the store can write the effect and the
/// key's response in one transaction, fenced by `token` (see the stage 6 stores).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reservation {
    /// The entry the attempt holds.
    pub id: EntryId,
    /// The token it holds it with.
    pub token: Token,
}

tokio::task_local! {
    /// The reservation of the first attempt being polled. A task-local rather than a request
    /// extension: the extension map costs three allocations per request, this costs none.
    static CURRENT: Reservation;
}

impl Reservation {
    /// The reservation of the first attempt this code runs in: `Some` inside the handler's
    /// future when the layer runs it for a fresh key, `None` for a keyless request or outside
    /// any handler (a task the handler spawned does not inherit it).
    pub fn current() -> Option<Reservation> {
        CURRENT.try_with(|reservation| *reservation).ok()
    }

    /// Runs `attempt` with this reservation as [`Reservation::current`] whenever it is polled.
    pub fn scope<F: Future>(self, attempt: F) -> impl Future<Output = F::Output> {
        CURRENT.scope(self, attempt)
    }
}

/// The state of one entry.
#[derive(Debug)]
pub enum Lookup {
    /// No live entry: the key is free.
    Absent,
    /// A first attempt is running.
    InFlight {
        /// The fingerprint of the running request.
        fingerprint: Fingerprint,
        /// Resolves when that attempt completes or is released.
        wait: Waiter,
    },
    /// The first attempt finished and its answer is kept.
    Done {
        /// The fingerprint of the request that produced it.
        fingerprint: Fingerprint,
        /// The answer to replay.
        response: StoredResponse,
    },
}

/// The answer to a reservation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reserve {
    /// The caller owns the key and runs the first attempt.
    Reserved(Token),
    /// Someone else holds the key (they won the race).
    Taken,
    /// The store is at its bounds with live records; nothing was evicted.
    Full,
}

/// How a running first attempt ended, as seen by a waiting duplicate.
#[derive(Debug, Clone)]
pub enum AttemptEnd {
    /// It finished; here is its answer.
    Completed(StoredResponse),
    /// It failed and the key was released.
    Released,
    /// Its owner stopped renewing the lease (a database store's attempt whose process died or
    /// is paused): the key may be taken over now, with a higher token.
    Lapsed,
}

/// A future that resolves when a first attempt ends. Dropping it stops waiting.
pub struct Waiter(Pin<Box<dyn Future<Output = AttemptEnd> + Send>>);

impl Waiter {
    /// Wraps any future that reports the end of an attempt.
    pub fn new(future: impl Future<Output = AttemptEnd> + Send + 'static) -> Self {
        Self(Box::pin(future))
    }
}

impl Future for Waiter {
    type Output = AttemptEnd;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<AttemptEnd> {
        self.0.as_mut().poll(cx)
    }
}

impl fmt::Debug for Waiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Waiter")
    }
}

/// How much a store may hold, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreLimits {
    /// Most entries held at once, running or finished.
    pub max_entries: usize,
    /// Most bytes of stored responses held at once (checked when reserving).
    pub max_bytes: usize,
    /// How long a finished entry is kept; choose it longer than clients retry.
    pub retention: Duration,
}

impl StoreLimits {
    /// Whether a store holding `entries` entries and `bytes` bytes of responses must refuse a
    /// new key: one rule for every store, so each refuses at the same point.
    pub fn is_full(&self, entries: usize, bytes: usize) -> bool {
        entries >= self.max_entries || bytes >= self.max_bytes
    }
}

impl Default for StoreLimits {
    /// 10,000 entries, 64 MiB, 24 hours.
    fn default() -> Self {
        Self {
            max_entries: 10_000,
            max_bytes: 64 << 20,
            retention: Duration::from_secs(24 * 60 * 60),
        }
    }
}
