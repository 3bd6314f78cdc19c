// Mirrored by labs/evict-when-full, labs/split-check-insert: see labs/README.md before changing this file.
//! The in-memory response store: one mutex guards the lookup, the reservation and the byte count.
//!
//! # Example
//!
//! ```
//! use retrykey_http::{IdempotencyLayer, MemoryEntries, StoreLimits};
//! use std::time::Duration;
//!
//! let store = MemoryEntries::new(StoreLimits {
//!     max_entries: 1_000,
//!     max_bytes: 8 << 20,
//!     retention: Duration::from_secs(3600),
//! });
//! let layer = IdempotencyLayer::builder().store(store).build();
//! # let _ = layer;
//! ```

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
// tokio's clock: the real one, except where a runtime pauses it (tests) or simulates it (the
// simulator's hosts), so retention follows the time the rest of the server sees.
use tokio::time::Instant;

use tokio::sync::Notify;

use crate::{
    AttemptEnd, Entries, EntriesFuture, EntryId, Error, Fingerprint, Lookup, Reserve, StoreLimits,
    StoredResponse, Token, Waiter,
};

/// Expired records removed by each reservation (more only when the store is full).
const SWEEP_BATCH: usize = 2;

/// A [`Entries`] in process memory, bounded in entries and bytes, with retention.
///
/// One process only: replicas behind a load balancer each have their own, which is exactly
/// the gap a database-backed store closes.
#[derive(Debug, Default)]
pub struct SplitCheckInsert {
    limits: StoreLimits,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    entries: HashMap<EntryId, Entry>,
    bytes: usize,
    next_token: u64,
    /// Finished entries in completion order, which (with one retention for all) is also
    /// expiry order: sweeping pops from the front and touches only what has expired.
    expiry: VecDeque<(Instant, EntryId, Token)>,
}

#[derive(Debug)]
struct Entry {
    fingerprint: Fingerprint,
    token: Token,
    phase: Phase,
}

#[derive(Debug)]
enum Phase {
    /// Running. The announcer is made for the first waiter (most first attempts never have
    /// one); it tells every waiter how the attempt ended.
    InFlight(Option<Announcer>),
    /// Finished; replayed until `expires`.
    Done {
        response: StoredResponse,
        size: usize,
        expires: Instant,
    },
}

/// How a running first attempt ended, kept for the requests that wait on it. Waiters are woken
/// in the order they began to wait: a `watch` channel would wake them in a random order, and a
/// simulated run must repeat exactly from its seed.
#[derive(Debug, Default)]
struct Announce {
    end: Mutex<Option<AttemptEnd>>,
    notify: Notify,
}

impl Announce {
    /// Keeps the first end published and wakes every waiter.
    fn publish(&self, end: AttemptEnd) {
        self.end
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert(end);
        self.notify.notify_waiters();
    }

    /// Waits until an end is published.
    async fn wait(self: Arc<Self>) -> AttemptEnd {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            // Registered before the check, so a publish in between still wakes this waiter.
            notified.as_mut().enable();
            if let Some(end) = self
                .end
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
            {
                return end;
            }
            notified.await;
        }
    }
}

/// The running entry's side of an [`Announce`]: dropped without a word (the whole store
/// dropped), it tells the waiters the attempt was released.
#[derive(Debug, Default)]
struct Announcer(Arc<Announce>);

impl Drop for Announcer {
    fn drop(&mut self) {
        self.0.publish(AttemptEnd::Released);
    }
}

impl Entry {
    fn expired(&self, now: Instant) -> bool {
        matches!(self.phase, Phase::Done { expires, .. } if expires <= now)
    }
}

impl SplitCheckInsert {
    /// What a finished entry costs beyond its answer's own bytes, counted against the byte
    /// budget so that the budget bounds the memory really held: a hash-map slot, the expiry
    /// queue item and the answer's one buffer. About 350 bytes in all were measured for the
    /// payments answer (the appendix's memory figures); this leaves a wide margin.
    pub const ENTRY_OVERHEAD: usize = 1024;

    /// An empty store with the given bounds.
    pub fn new(limits: StoreLimits) -> Self {
        Self {
            limits,
            state: Mutex::default(),
        }
    }

    /// The bounds this store enforces.
    pub fn limits(&self) -> StoreLimits {
        self.limits
    }

    /// How many entries are held (running and finished, expired ones not yet swept included).
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether the store holds no entry at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of finished responses held, with each entry's own overhead.
    pub fn bytes(&self) -> usize {
        self.lock().bytes
    }

    /// Drops every finished entry past its retention; returns how many went.
    /// Reservations do this too, a few entries at a time, and all of it before refusing a
    /// key for lack of room, so calling it is optional.
    pub fn sweep(&self) -> usize {
        let now = Instant::now();
        let mut state = self.lock();
        let mut swept = 0;
        while let Some(removed) = state.sweep_one(now) {
            swept += usize::from(removed.is_some());
        }
        swept
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // No code below panics while holding the lock; if something did, the map is still
        // consistent, so keep serving rather than poison every later request.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl State {
    /// Removes the oldest expired entry, if any, and hands it back (to be dropped by the
    /// caller, after the lock if it likes). `Some(None)` when the oldest queue item was stale.
    fn sweep_one(&mut self, now: Instant) -> Option<Option<Entry>> {
        let &(expires, id, token) = self.expiry.front()?;
        if expires > now {
            return None;
        }
        self.expiry.pop_front();
        // The entry may have been released or reserved anew since: only remove the very
        // record this queue item was written for.
        let current = self.entries.get(&id);
        Some(if current.is_some_and(|e| e.token == token) {
            self.remove(&id)
        } else {
            None
        })
    }

    /// Removes an entry, returning its byte budget; waiters of a running one see it released.
    /// The entry is returned so that the caller may drop it after unlocking.
    fn remove(&mut self, id: &EntryId) -> Option<Entry> {
        let mut entry = self.entries.remove(id)?;
        match &mut entry.phase {
            Phase::Done { size, .. } => self.bytes -= *size,
            Phase::InFlight(announcer) => {
                if let Some(announcer) = announcer.take() {
                    announcer.0.publish(AttemptEnd::Released);
                }
            }
        }
        Some(entry)
    }
}

impl Entries for SplitCheckInsert {
    fn lookup<'a>(&'a self, id: &'a EntryId) -> EntriesFuture<'a, Lookup> {
        let mut state = self.lock();
        let lookup = match state.entries.get_mut(id) {
            None => Lookup::Absent,
            // Past its retention: as good as gone (a sweep or a reservation removes it).
            Some(entry) if entry.expired(Instant::now()) => Lookup::Absent,
            Some(entry) => match &mut entry.phase {
                Phase::Done { response, .. } => Lookup::Done {
                    fingerprint: entry.fingerprint,
                    response: response.clone(),
                },
                Phase::InFlight(announcer) => {
                    let announce = Arc::clone(&announcer.get_or_insert_with(Announcer::default).0);
                    Lookup::InFlight {
                        fingerprint: entry.fingerprint,
                        wait: Waiter::new(announce.wait()),
                    }
                }
            },
        };
        EntriesFuture::ready(Ok(lookup))
    }

    fn reserve<'a>(
        &'a self,
        id: &'a EntryId,
        fingerprint: &'a Fingerprint,
    ) -> EntriesFuture<'a, Reserve> {
        let now = Instant::now();
        let mut state = self.lock();
        // A few expired records go with every reservation: at most one is added, so the
        // store keeps up without any request paying for a long backlog.
        let swept: [_; SWEEP_BATCH] = std::array::from_fn(|_| state.sweep_one(now).flatten());
        let expired = match state.entries.get(id) {
            // NEGATIVE: no check that the key is still free. This trusts the caller's earlier
            // lookup, made under another lock: two duplicates that both saw "absent" both
            // reserve (the second replaces the first) and the handler runs twice.
            Some(_) => state.remove(id),
            None => None,
        };
        if self.limits.is_full(state.entries.len(), state.bytes) {
            while state.sweep_one(now).is_some() {} // the whole backlog, before refusing
        }
        if self.limits.is_full(state.entries.len(), state.bytes) {
            // Every entry is live: refuse rather than forget a record someone relies on.
            return EntriesFuture::ready(Ok(Reserve::Full));
        }
        state.next_token += 1;
        let token = Token(state.next_token);
        state.entries.insert(
            *id,
            Entry {
                fingerprint: *fingerprint,
                token,
                phase: Phase::InFlight(None),
            },
        );
        drop(state);
        drop((swept, expired)); // freed outside the lock
        EntriesFuture::ready(Ok(Reserve::Reserved(token)))
    }

    fn complete<'a>(
        &'a self,
        id: &'a EntryId,
        token: Token,
        response: StoredResponse,
    ) -> EntriesFuture<'a, ()> {
        let mut state = self.lock();
        let State {
            entries,
            bytes,
            expiry,
            ..
        } = &mut *state;
        let result = match entries.get_mut(id) {
            Some(entry) if entry.token == token && matches!(entry.phase, Phase::InFlight(_)) => {
                let size = response.size() + Self::ENTRY_OVERHEAD;
                let expires = Instant::now() + self.limits.retention;
                if let Phase::InFlight(Some(announcer)) = &entry.phase {
                    announcer.0.publish(AttemptEnd::Completed(response.clone()));
                }
                entry.phase = Phase::Done {
                    response,
                    size,
                    expires,
                };
                *bytes += size;
                expiry.push_back((expires, *id, token));
                Ok(())
            }
            _ => Err(Error::NotOwner),
        };
        EntriesFuture::ready(result)
    }

    fn release<'a>(&'a self, id: &'a EntryId, token: Token) -> EntriesFuture<'a, ()> {
        let mut state = self.lock();
        let result = match state.entries.get(id) {
            Some(entry) if entry.token == token => {
                state.remove(id);
                Ok(())
            }
            _ => Err(Error::NotOwner),
        };
        EntriesFuture::ready(result)
    }
}
