//! The in-memory response store: one mutex guards the lookup, the reservation and the byte count.
//!
//! # Example
//!
//! ```
//! use retrykey_http::{IdempotencyLayer, MemoryStore, StoreLimits};
//! use std::time::Duration;
//!
//! let store = MemoryStore::new(StoreLimits {
//!     max_entries: 1_000,
//!     max_bytes: 8 << 20,
//!     retention: Duration::from_secs(3600),
//! });
//! let layer = IdempotencyLayer::builder().store(store).build();
//! # let _ = layer;
//! ```

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use tokio::sync::watch;

use retrykey_http::{
    EntryId, Error, Fingerprint, Lookup, Outcome, Reserve, ResponseStore, StoreFuture, StoreLimits,
    StoredResponse, Token, Waiter,
};

/// A [`ResponseStore`] in process memory, bounded in entries and bytes, with retention.
///
/// One process only: replicas behind a load balancer each have their own, which is exactly
/// the gap a database-backed store closes.
#[derive(Debug, Default)]
pub struct MemoryStore {
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
    /// Running. The channel is made for the first waiter (most first attempts never have
    /// one); waiters see `Some` in it when the attempt ends.
    InFlight(Option<watch::Sender<Option<Outcome>>>),
    /// Finished; replayed until `expires`.
    Done {
        response: Arc<StoredResponse>,
        size: usize,
        expires: Instant,
    },
}

impl Entry {
    fn expired(&self, now: Instant) -> bool {
        matches!(self.phase, Phase::Done { expires, .. } if expires <= now)
    }
}

impl MemoryStore {
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

    /// Bytes of finished responses held.
    pub fn bytes(&self) -> usize {
        self.lock().bytes
    }

    /// Drops every finished entry past its retention; returns how many went.
    /// Every reservation does this too (it costs only what has expired), so calling it is
    /// optional.
    pub fn sweep(&self) -> usize {
        self.lock().sweep(Instant::now())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // No code below panics while holding the lock; if something did, the map is still
        // consistent, so keep serving rather than poison every later request.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn full(&self, state: &State) -> bool {
        state.entries.len() >= self.limits.max_entries || state.bytes >= self.limits.max_bytes
    }
}

impl State {
    fn sweep(&mut self, now: Instant) -> usize {
        let mut swept = 0;
        while let Some(&(expires, id, token)) = self.expiry.front() {
            if expires > now {
                break;
            }
            self.expiry.pop_front();
            // The entry may have been released or reserved anew since: only remove the very
            // record this queue item was written for.
            if self
                .entries
                .get(&id)
                .is_some_and(|e| e.token == token && e.expired(now))
            {
                self.remove(&id);
                swept += 1;
            }
        }
        swept
    }

    /// Removes an expired entry for `id`, if there is one.
    fn forget_expired(&mut self, id: &EntryId, now: Instant) {
        if self.entries.get(id).is_some_and(|entry| entry.expired(now)) {
            self.remove(id);
        }
    }

    /// Removes an entry, returning its byte budget; waiters of a running one see it released.
    fn remove(&mut self, id: &EntryId) {
        match self.entries.remove(id).map(|entry| entry.phase) {
            Some(Phase::Done { size, .. }) => self.bytes -= size,
            Some(Phase::InFlight(Some(sender))) => {
                sender.send_replace(Some(Outcome::Released));
            }
            Some(Phase::InFlight(None)) | None => {}
        }
    }
}

impl ResponseStore for MemoryStore {
    fn lookup<'a>(&'a self, id: &'a EntryId) -> StoreFuture<'a, Lookup> {
        let mut state = self.lock();
        state.forget_expired(id, Instant::now());
        let lookup = match state.entries.get_mut(id) {
            None => Lookup::Absent,
            Some(entry) => match &mut entry.phase {
                Phase::Done { response, .. } => Lookup::Done {
                    fingerprint: entry.fingerprint,
                    response: Arc::clone(response),
                },
                Phase::InFlight(sender) => {
                    let sender = sender.get_or_insert_with(|| watch::channel(None).0);
                    let mut receiver = sender.subscribe();
                    Lookup::InFlight {
                        fingerprint: entry.fingerprint,
                        wait: Waiter::new(async move {
                            match receiver.wait_for(Option::is_some).await {
                                Ok(outcome) => outcome.clone().unwrap_or(Outcome::Released),
                                // The entry vanished without a word: treat it as released.
                                Err(_) => Outcome::Released,
                            }
                        }),
                    }
                }
            },
        };
        Box::pin(std::future::ready(Ok(lookup)))
    }

    fn reserve<'a>(
        &'a self,
        id: &'a EntryId,
        fingerprint: &'a Fingerprint,
    ) -> StoreFuture<'a, Reserve> {
        let now = Instant::now();
        let mut state = self.lock();
        state.sweep(now);
        state.forget_expired(id, now);
        // Checked again here, under the same lock as the insertion below: the caller's
        // earlier lookup may be stale, and two callers may both have seen "absent".
        if state.entries.contains_key(id) {
            return Box::pin(std::future::ready(Ok(Reserve::Taken)));
        }
        if self.full(&state) {
            // NEGATIVE: instead of refusing, make room by forgetting the oldest entry, live or
            // not. A client still retrying that entry's key is charged a second time.
            let oldest = state.entries.iter().min_by_key(|(_, e)| e.token.0);
            if let Some(oldest) = oldest.map(|(id, _)| *id) {
                state.remove(&oldest);
            }
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
        Box::pin(std::future::ready(Ok(Reserve::Reserved(token))))
    }

    fn complete<'a>(
        &'a self,
        id: &'a EntryId,
        token: Token,
        response: StoredResponse,
    ) -> StoreFuture<'a, ()> {
        let mut state = self.lock();
        let State {
            entries,
            bytes,
            expiry,
            ..
        } = &mut *state;
        let result = match entries.get_mut(id) {
            Some(entry) if entry.token == token && matches!(entry.phase, Phase::InFlight(_)) => {
                let size = response.size();
                let response = Arc::new(response);
                let expires = Instant::now() + self.limits.retention;
                let done = Phase::Done {
                    response: Arc::clone(&response),
                    size,
                    expires,
                };
                if let Phase::InFlight(Some(sender)) = std::mem::replace(&mut entry.phase, done) {
                    sender.send_replace(Some(Outcome::Completed(response)));
                }
                *bytes += size;
                expiry.push_back((expires, *id, token));
                Ok(())
            }
            _ => Err(Error::NotOwner),
        };
        Box::pin(std::future::ready(result))
    }

    fn release<'a>(&'a self, id: &'a EntryId, token: Token) -> StoreFuture<'a, ()> {
        let mut state = self.lock();
        let result = match state.entries.get(id) {
            Some(entry) if entry.token == token => {
                state.remove(id);
                Ok(())
            }
            _ => Err(Error::NotOwner),
        };
        Box::pin(std::future::ready(result))
    }
}
