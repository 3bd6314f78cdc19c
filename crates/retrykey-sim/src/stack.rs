//! Which client and layer a run uses: the correct ones, or a broken variant's copy of one file.

use std::marker::PhantomData;
use std::sync::Arc;

use retrykey_client::{RetrySteps, StandardSteps};
use retrykey_http::{Entries, MemoryEntries, StoreLimits};

/// Builds the layer's store for the limits given.
pub type MakeStore = fn(StoreLimits) -> Arc<dyn Entries>;
/// Applies an engine to the layer's builder.
pub type WithEngine = fn(retrykey_http::Builder) -> retrykey_http::Builder;

/// The code under test: the retry client's steps `P`, the layer's engine and its store.
///
/// [`Stack::correct`] is the lab's own client and layer. `with_engine`, `with_store` and
/// `with_steps` put another engine, store or retry loop in their place, as a broken variant's
/// own checks do, so the simulator judges exactly the code those checks judge.
pub struct Stack<P: RetrySteps = StandardSteps> {
    pub(crate) engine: WithEngine,
    pub(crate) store: MakeStore,
    steps: PhantomData<fn() -> P>,
}

impl Stack {
    /// The correct client and the correct layer.
    pub fn correct() -> Self {
        Stack {
            engine: |builder| builder,
            store: |limits| Arc::new(MemoryEntries::new(limits)),
            steps: PhantomData,
        }
    }
}

impl<P: RetrySteps> Stack<P> {
    /// The layer built with `engine` applied to its builder (a variant's engine).
    pub fn with_engine(self, engine: WithEngine) -> Self {
        Stack { engine, ..self }
    }

    /// The layer's records kept in the store `store` makes (a variant's store).
    pub fn with_store(self, store: MakeStore) -> Self {
        Stack { store, ..self }
    }

    /// The client built with the executor pieces `Q` (a variant's retry loop or backoff).
    pub fn with_steps<Q: RetrySteps>(self) -> Stack<Q> {
        Stack {
            engine: self.engine,
            store: self.store,
            steps: PhantomData,
        }
    }
}

impl<P: RetrySteps> Clone for Stack<P> {
    fn clone(&self) -> Self {
        Stack {
            engine: self.engine,
            store: self.store,
            steps: PhantomData,
        }
    }
}

impl<P: RetrySteps> std::fmt::Debug for Stack<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stack").finish_non_exhaustive()
    }
}
