//! The retry client: a policy, a retry quota shared by all its operations, and seeded randomness.

use std::future::Future;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rand::{Rng, SeedableRng};
use retrykey::Key;

use crate::{Attempt, Budget, Failure, JitterRng, Outcome, Policy, RetryQuota, Success, Verdict};

/// The pieces the executor is built from, one per file: the retry loop (`executor.rs`), the
/// backoff schedule (`backoff.rs`), the classification (`classify.rs`) and how a nested layer
/// derives its budget (`nesting.rs`).
///
/// Every method but `execute` has the correct default. The correct loop is itself built on this
/// trait, so it is no default here: [`StandardSteps`] plugs it in (`steps.rs`) and keeps the
/// other defaults. The negative variants under `labs/` each replace one method with their copy
/// of the file, so the shared checks (`retrykey-client-checks`) run the same loop around exactly
/// one broken piece. A seam for the labs, hidden from the documented API (see `labs/README.md`).
#[doc(hidden)]
pub trait RetrySteps: Sized + Send + Sync + 'static {
    /// Runs one logical operation: the correct loop is [`crate::executor::execute`].
    fn execute<'a, T, F, Fut>(
        client: &'a Client<Self>,
        key: Option<Key>,
        parent: Option<Budget>,
        attempt: F,
    ) -> impl Future<Output = Outcome<T>> + Send + 'a
    where
        T: Send + 'a,
        F: FnMut(Attempt) -> Fut + Send + 'a,
        Fut: Future<Output = Result<Success<T>, Failure>> + Send + 'a;

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

/// Runs logical operations as sequences of attempts, sharing one [`RetryQuota`].
///
/// Create one per downstream service and share it: the quota only bounds retries if all the
/// operations against that service draw from it.
// `P`: the executor's pieces, swapped only by the labs (labs/README.md); leave it at its default.
#[derive(Debug)]
pub struct Client<P: RetrySteps = StandardSteps> {
    policy: Policy,
    quota: Arc<RetryQuota>,
    rng: Mutex<JitterRng>,
    seeded: bool,
    steps: PhantomData<fn() -> P>,
}

impl Client {
    /// A builder for a client with `policy`, the default quota and unseeded randomness.
    pub fn builder(policy: Policy) -> ClientBuilder {
        ClientBuilder {
            policy,
            quota: None,
            seed: None,
            steps: PhantomData,
        }
    }
}

impl<P: RetrySteps> Client<P> {
    /// The policy every operation of this client follows.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The retry quota shared by this client's operations.
    pub fn quota(&self) -> &RetryQuota {
        &self.quota
    }

    /// A new operation key: a UUID v4. From the operating system's randomness, or from the seed
    /// when the client was given one (so that demos repeat). Never derived from the payload:
    /// two identical requests are still two operations.
    pub fn new_key(&self) -> Key {
        let uuid = if self.seeded {
            let mut bytes = [0u8; 16];
            self.rng().fill_bytes(&mut bytes);
            uuid::Builder::from_random_bytes(bytes).into_uuid()
        } else {
            uuid::Uuid::new_v4()
        };
        Key::new(uuid.to_string()).expect("a UUID's text is a valid operation key")
    }

    /// The wait before retry number `retry` (1-based), drawn from this client's generator.
    pub fn next_delay(&self, retry: u32) -> Duration {
        P::delay(&self.policy, retry, &mut self.rng())
    }

    /// Runs one logical operation under a new key and a fresh budget.
    ///
    /// `attempt` is called once per attempt with the same [`Attempt::key`]. Dropping the
    /// returned future stops the operation at once: nothing is spawned, no wait survives it.
    /// The future is `Send` whenever the attempts are, so an operation can run in a spawned
    /// task.
    pub fn run<'a, T, F, Fut>(&'a self, attempt: F) -> impl Future<Output = Outcome<T>> + Send + 'a
    where
        T: Send + 'a,
        F: FnMut(Attempt) -> Fut + Send + 'a,
        Fut: Future<Output = Result<Success<T>, Failure>> + Send + 'a,
    {
        P::execute(self, None, None, attempt)
    }

    /// Runs one logical operation under a key the caller already holds: for example a key it
    /// stored before a restart, to find out what became of an operation reported unknown.
    pub fn run_with_key<'a, T, F, Fut>(
        &'a self,
        key: Key,
        attempt: F,
    ) -> impl Future<Output = Outcome<T>> + Send + 'a
    where
        T: Send + 'a,
        F: FnMut(Attempt) -> Fut + Send + 'a,
        Fut: Future<Output = Result<Success<T>, Failure>> + Send + 'a,
    {
        P::execute(self, Some(key), None, attempt)
    }

    /// Runs one operation as a nested layer inside an attempt of an enclosing operation: the
    /// layer works within `parent` (its remaining deadline and its pool of retries) and keeps
    /// the enclosing operation's `key`.
    pub fn run_nested<'a, T, F, Fut>(
        &'a self,
        parent: &Budget,
        key: Key,
        attempt: F,
    ) -> impl Future<Output = Outcome<T>> + Send + 'a
    where
        T: Send + 'a,
        F: FnMut(Attempt) -> Fut + Send + 'a,
        Fut: Future<Output = Result<Success<T>, Failure>> + Send + 'a,
    {
        P::execute(self, Some(key), Some(parent.clone()), attempt)
    }

    fn rng(&self) -> std::sync::MutexGuard<'_, JitterRng> {
        // A generator's state is valid whatever a panicking holder did: keep using it.
        self.rng.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Builds a [`Client`].
#[derive(Debug)]
pub struct ClientBuilder<P: RetrySteps = StandardSteps> {
    policy: Policy,
    quota: Option<Arc<RetryQuota>>,
    seed: Option<u64>,
    steps: PhantomData<fn() -> P>,
}

impl<P: RetrySteps> ClientBuilder<P> {
    /// Seeds the generator behind jitter and keys, so that a run repeats exactly.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Shares `quota` with other clients (by default each client has its own full bucket).
    pub fn quota(mut self, quota: Arc<RetryQuota>) -> Self {
        self.quota = Some(quota);
        self
    }

    /// Builds the executor from other pieces: how the labs swap in their copy of one file.
    #[doc(hidden)]
    pub fn steps<Q: RetrySteps>(self) -> ClientBuilder<Q> {
        ClientBuilder {
            policy: self.policy,
            quota: self.quota,
            seed: self.seed,
            steps: PhantomData,
        }
    }

    /// The client.
    pub fn build(self) -> Client<P> {
        let rng = match self.seed {
            Some(seed) => JitterRng::seed_from_u64(seed),
            None => rand::make_rng(),
        };
        Client {
            policy: self.policy,
            quota: self.quota.unwrap_or_default(),
            rng: Mutex::new(rng),
            seeded: self.seed.is_some(),
            steps: PhantomData,
        }
    }
}
