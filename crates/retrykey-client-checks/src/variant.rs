//! How a negative variant's copy of one file becomes an executor to run the checks against.

/// Declares `pub struct $name`: the correct pieces (`RetrySteps`) with one method replaced by a
/// variant's copy of its file. Used by each negative variant's tests and by the workspace's
/// in-process check of the variants, so both run the very same executor.
///
/// The forms: `execute = path::to::execute`, `delay = path::to::full_jitter`,
/// `classify = path::to::classify`, `child_budget = path::to::child_budget`.
#[macro_export]
macro_rules! variant_steps {
    // The retry loop has no default in `RetrySteps` (the correct one is built from the trait):
    // every form names one, the correct `executor::execute` unless it replaces it.
    (@execute $execute:path) => {
        fn execute<'a, T, F, Fut>(
            client: &'a $crate::__client::Client<Self>,
            key: ::core::option::Option<$crate::__retrykey::Key>,
            parent: ::core::option::Option<$crate::__client::Budget>,
            attempt: F,
        ) -> impl ::core::future::Future<Output = $crate::__client::Outcome<T>> + Send + 'a
        where
            T: Send + 'a,
            F: FnMut($crate::__client::Attempt) -> Fut + Send + 'a,
            Fut: ::core::future::Future<
                    Output = ::core::result::Result<
                        $crate::__client::Success<T>,
                        $crate::__client::Failure,
                    >,
                > + Send
                + 'a,
        {
            $execute(client, key, parent, attempt)
        }
    };
    ($name:ident, execute = $execute:path) => {
        /// The correct pieces, with this variant's retry loop.
        pub struct $name;
        impl $crate::__client::RetrySteps for $name {
            $crate::variant_steps!(@execute $execute);
        }
    };
    ($name:ident, delay = $delay:path) => {
        /// The correct pieces, with this variant's backoff schedule.
        pub struct $name;
        impl $crate::__client::RetrySteps for $name {
            $crate::variant_steps!(@execute $crate::__client::executor::execute);
            fn delay(
                policy: &$crate::__client::Policy,
                retry: u32,
                rng: &mut $crate::__client::JitterRng,
            ) -> ::core::time::Duration {
                $delay(policy, retry, rng)
            }
        }
    };
    ($name:ident, classify = $classify:path) => {
        /// The correct pieces, with this variant's classification.
        pub struct $name;
        impl $crate::__client::RetrySteps for $name {
            $crate::variant_steps!(@execute $crate::__client::executor::execute);
            fn classify(
                failure: &$crate::__client::Failure,
                policy: &$crate::__client::Policy,
            ) -> $crate::__client::Verdict {
                $classify(failure, policy)
            }
        }
    };
    ($name:ident, child_budget = $child_budget:path) => {
        /// The correct pieces, with this variant's budget for nested layers.
        pub struct $name;
        impl $crate::__client::RetrySteps for $name {
            $crate::variant_steps!(@execute $crate::__client::executor::execute);
            fn child_budget(
                parent: &$crate::__client::Budget,
                policy: &$crate::__client::Policy,
            ) -> $crate::__client::Budget {
                $child_budget(parent, policy)
            }
        }
    };
}
