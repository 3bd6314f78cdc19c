//! The seams of the retry client: the four decisions a negative variant may get wrong.

use std::future::Future;
use std::time::Duration;

use retrykey::Key;

use crate::{Attempt, Budget, Client, Failure, JitterRng, Outcome, Policy, Reply, Verdict};

/// The pieces the executor is built from, one per file: the retry loop (`executor.rs`), the
/// backoff schedule (`backoff.rs`), the classification (`classify.rs`) and how a nested layer
/// derives its budget (`layer.rs`).
///
/// Every method has the correct default, and [`Standard`] uses them all. The negative variants
/// under `labs/` each replace one method with their copy of the file, so the shared checks
/// (`retry_suite!`) run the same loop around exactly one broken piece.
pub trait Parts: Sized + Send + Sync + 'static {
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
        Fut: Future<Output = Result<Reply<T>, Failure>> + Send + 'a,
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

    /// A nested layer's budget: see [`crate::layer::child_budget`].
    fn child_budget(parent: &Budget, policy: &Policy) -> Budget {
        crate::layer::child_budget(parent, policy)
    }
}

/// The correct pieces: what [`Client`] uses unless told otherwise.
#[derive(Clone, Copy, Debug, Default)]
pub struct Standard;

impl Parts for Standard {}

/// Declares `pub struct $name`: the [`Standard`] pieces with one method replaced by a variant's
/// copy of its file. Used by each negative variant's tests and by the workspace's in-process
/// check of the variants, so both run the very same executor.
///
/// The forms: `execute = path::to::execute`, `delay = path::to::full_jitter`,
/// `classify = path::to::classify`, `child_budget = path::to::child_budget`.
#[macro_export]
macro_rules! variant_parts {
    ($name:ident, execute = $execute:path) => {
        /// The correct pieces, with this variant's retry loop.
        pub struct $name;
        impl $crate::Parts for $name {
            fn execute<'a, T, F, Fut>(
                client: &'a $crate::Client<Self>,
                key: ::core::option::Option<$crate::__retrykey::Key>,
                parent: ::core::option::Option<$crate::Budget>,
                attempt: F,
            ) -> impl ::core::future::Future<Output = $crate::Outcome<T>> + Send + 'a
            where
                T: Send + 'a,
                F: FnMut($crate::Attempt) -> Fut + Send + 'a,
                Fut: ::core::future::Future<
                        Output = ::core::result::Result<$crate::Reply<T>, $crate::Failure>,
                    > + Send
                    + 'a,
            {
                $execute(client, key, parent, attempt)
            }
        }
    };
    ($name:ident, delay = $delay:path) => {
        /// The correct pieces, with this variant's backoff schedule.
        pub struct $name;
        impl $crate::Parts for $name {
            fn delay(
                policy: &$crate::Policy,
                retry: u32,
                rng: &mut $crate::JitterRng,
            ) -> ::core::time::Duration {
                $delay(policy, retry, rng)
            }
        }
    };
    ($name:ident, classify = $classify:path) => {
        /// The correct pieces, with this variant's classification.
        pub struct $name;
        impl $crate::Parts for $name {
            fn classify(failure: &$crate::Failure, policy: &$crate::Policy) -> $crate::Verdict {
                $classify(failure, policy)
            }
        }
    };
    ($name:ident, child_budget = $child_budget:path) => {
        /// The correct pieces, with this variant's budget for nested layers.
        pub struct $name;
        impl $crate::Parts for $name {
            fn child_budget(parent: &$crate::Budget, policy: &$crate::Policy) -> $crate::Budget {
                $child_budget(parent, policy)
            }
        }
    };
}
