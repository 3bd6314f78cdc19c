//! The seams of the retry client: the four decisions a negative variant may get wrong.

use std::future::Future;
use std::time::Duration;

use retrykey::Key;

use crate::{Attempt, Budget, Client, Failure, JitterRng, Outcome, Policy, Success, Verdict};

/// The pieces the executor is built from, one per file: the retry loop (`executor.rs`), the
/// backoff schedule (`backoff.rs`), the classification (`classify.rs`) and how a nested layer
/// derives its budget (`nesting.rs`).
///
/// Every method has the correct default, and [`StandardSteps`] uses them all. The negative
/// variants under `labs/` each replace one method with their copy of the file, so the shared
/// checks (`retrykey-client-checks`) run the same loop around exactly one broken piece. A seam for
/// the labs, hidden from the documented API (see `labs/README.md`).
#[doc(hidden)]
pub trait RetrySteps: Sized + Send + Sync + 'static {
    /// Runs one logical operation: see [`crate::executor::execute`].
    fn execute<'a, T, F, Fut>(
        client: &'a Client<Self>,
        key: Option<Key>,
        parent: Option<Budget>,
        attempt: F,
    ) -> impl Future<Output = Outcome<T>> + Send + 'a
    where
        T: Send + 'a,
        F: FnMut(Attempt) -> Fut + Send + 'a,
        Fut: Future<Output = Result<Success<T>, Failure>> + Send + 'a,
    {
        crate::executor::execute(client, key, parent, attempt)
    }

    /// The wait before retry number `retry`: see [`crate::backoff::full_jitter`].
    fn delay(policy: &Policy, retry: u32, rng: &mut JitterRng) -> Duration {
        crate::backoff::full_jitter(policy, retry, rng)
    }

    /// Whether a failure is retried: see [`crate::classify::classify`].
    fn classify(failure: &Failure, policy: &Policy) -> Verdict {
        crate::classify::classify(failure, policy)
    }

    /// A nested layer's budget: see [`crate::nesting::child_budget`].
    fn child_budget(parent: &Budget, policy: &Policy) -> Budget {
        crate::nesting::child_budget(parent, policy)
    }
}

/// The correct pieces: what [`Client`] uses unless told otherwise.
#[derive(Clone, Copy, Debug, Default)]
pub struct StandardSteps;

impl RetrySteps for StandardSteps {}
