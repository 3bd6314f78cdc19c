//! The attempts this process is running: their lease renewals, whether a handler's commit has
//! already stored their answer, and the claims whose reply was lost.
//!
//! Both save database work at the end of an attempt. A renewal task is stopped as soon as the
//! attempt ends, instead of waking once more to find out. And when the book committed the answer
//! together with the charge, the layer's `complete` that follows has nothing left to write: the
//! store answers it from here, without a round trip.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use retrykey_http::{EntryId, Error, Token};
use retrykey_program::Clock;
use tokio::task::AbortHandle;

use crate::lease::{Lease, millis};

/// The running attempts of one store, by token (tokens are never reused, so one is enough),
/// and the keys whose claim this process sent without learning its outcome.
#[derive(Debug, Default)]
pub(crate) struct Attempts {
    running: Mutex<HashMap<Token, Attempt>>,
    doubtful: Mutex<HashSet<EntryId>>,
}

#[derive(Debug, Default)]
struct Attempt {
    renewal: Option<AbortHandle>,
    /// The book stored the answer under this token, in the transaction of the charge.
    answered: bool,
}

impl Attempts {
    /// Keeps the lease of the attempt holding `token` on `id` alive while it runs, within the
    /// lease's `max_hold`: `renew(until)` extends it, fenced by the token. Stops when the attempt
    /// ends ([`Attempts::end`]), or as soon as a renewal changes nothing (another replica took the
    /// key over).
    pub(crate) fn keep_renewing<F, Fut>(
        &self,
        id: EntryId,
        token: Token,
        lease: Lease,
        clock: Clock,
        renew: F,
    ) where
        F: Fn(i64) -> Fut + Send + 'static,
        Fut: Future<Output = Result<bool, Error>> + Send,
    {
        let renewal = tokio::spawn(async move {
            let started = Instant::now();
            loop {
                tokio::time::sleep(lease.renew_every()).await;
                if started.elapsed() + lease.duration > lease.max_hold {
                    break; // the lease lapses on its own; a stuck handler does not hold the key
                }
                match renew(clock.now_ms() + millis(lease.duration)).await {
                    Ok(true) => {}
                    Ok(false) => break,
                    Err(error) => tracing::warn!(entry = ?id, %error, "lease renewal failed"),
                }
            }
        });
        self.lock().entry(token).or_default().renewal = Some(renewal.abort_handle());
    }

    /// The book committed the answer of the attempt holding `token`.
    pub(crate) fn answered(&self, token: Token) {
        self.lock().entry(token).or_default().answered = true;
    }

    /// The attempt holding `token` has ended: stops its renewals, and says whether the book had
    /// already stored its answer.
    pub(crate) fn end(&self, token: Token) -> bool {
        let attempt = self.lock().remove(&token).unwrap_or_default();
        if let Some(renewal) = attempt.renewal {
            renewal.abort();
        }
        attempt.answered
    }

    /// Whether an attempt of this process holds `token` now.
    pub(crate) fn runs(&self, token: Token) -> bool {
        self.lock().contains_key(&token)
    }

    /// A claim of `id` failed without an answer: it may have committed (its reply was lost),
    /// leaving a record in flight that no attempt of this process runs.
    pub(crate) fn doubt(&self, id: EntryId) {
        self.doubtful().insert(id);
    }

    /// Whether a claim of `id` is in doubt; asking settles the doubt.
    pub(crate) fn settle_doubt(&self, id: &EntryId) -> bool {
        self.doubtful().remove(id)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Token, Attempt>> {
        // Nothing panics while holding it; a poisoned map is still consistent.
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn doubtful(&self) -> std::sync::MutexGuard<'_, HashSet<EntryId>> {
        self.doubtful.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
