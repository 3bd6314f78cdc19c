//! The retry checks as named functions, shared by the correct client and every negative variant.
//!
//! Each check is a plain function, generic over the executor's pieces (`retrykey_client::RetrySteps`), that panics
//! with a message naming the broken requirement. One table of names turns them into `#[test]`s
//! ([`retry_suite!`]) and into an in-process run ([`failing_checks`]), so the same names
//! (`retry_suite::lost_reply_is_replayed_not_reapplied`, ...) print for the correct client and for
//! each variant under `labs/`. Each check builds its own current-thread runtime with tokio's
//! clock paused: waits take no real time and every run is identical, so a variant fails its
//! checks on every run, not by chance.
//!
//! # Reading order
//!
//! 1. This file: the table of check names ([`__with_retry_checks!`]), the macro that turns it
//!    into tests, and [`failing_checks`], all on the scaffold every checks crate shares
//!    (`retrykey-checks`).
//! 2. `identity.rs`: one key per operation, the reason the client exists.
//! 3. `classification.rs`: what is retried and what is final.
//! 4. `timing.rs`: attempts, backoff, jitter, Retry-After, budget and cancellation.
//! 5. `layers.rs` and `quota.rs`: the bounds on retries across layers and across operations.
//! 6. `variant.rs`: [`variant_steps!`], how a variant's copy of one file becomes an executor.
//!
//! # Example
//!
//! ```
//! // tests/it/main.rs of the client: every check against the correct pieces.
//! retrykey_client_checks::retry_suite!(retrykey_client::StandardSteps);
//! # fn main() {}
//! ```

mod classification;
mod identity;
mod layers;
mod quota;
mod timing;
mod variant;

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Mutex;

use retrykey_client::{Client, Failure, Outcome, RetrySteps, Success};
use tokio::time::Instant;

pub use classification::{
    definitive_answers_are_not_retried, plain_500_is_retried_only_when_configured,
    transient_failures_are_retried,
};
pub use identity::{key_is_fixed_before_the_first_attempt, lost_reply_is_replayed_not_reapplied};
pub use layers::{nested_layer_cannot_outlive_its_caller, nested_layers_share_one_budget};
pub use quota::quota_bounds_retries_during_an_outage;
pub use timing::{
    attempts_stop_at_the_policy_maximum, budget_bounds_the_whole_operation,
    dropping_the_operation_cancels_it, retries_of_synchronised_clients_spread_out,
    retry_after_is_honoured, retry_after_past_the_budget_stops_early,
    waits_stay_below_the_backoff_ceiling,
};

// The crates the exported macros name, so a caller needs no dependency of its own on them.
#[doc(hidden)]
pub use {retrykey as __retrykey, retrykey_checks as __checks, retrykey_client as __client};

/// One retry check, for the executor built from the pieces it was instantiated with.
pub type Check = fn();

/// Every check for the executor built from `P`, named as `cargo test` prints it
/// (`retry_suite::<check>`), in the order they run.
pub fn checks<P: RetrySteps>() -> Vec<(&'static str, Check)> {
    __with_retry_checks!(table { P }).to_vec()
}

/// The checks that fail for the executor built from `P`, named as `cargo test` prints them
/// (`retry_suite::<check>`). Every check runs on its own paused-clock runtime, so the set is
/// the same on every run.
pub fn failing_checks<P: RetrySteps>() -> BTreeSet<String> {
    retrykey_checks::failing_checks(&checks::<P>(), |check| check())
}

/// Runs `future` on a fresh current-thread runtime whose clock starts paused.
fn paused<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime builds")
        .block_on(future)
}

/// Runs one operation whose attempts fail with `failure` until attempt `succeed_at` (if any),
/// and returns the outcome and the instant each attempt started.
async fn timed<P: RetrySteps>(
    client: &Client<P>,
    failure: Failure,
    succeed_at: Option<u32>,
) -> (Outcome<()>, Vec<Instant>) {
    let starts = Mutex::new(Vec::new());
    let outcome = client
        .run(|attempt| {
            starts.lock().unwrap().push(Instant::now());
            let failure = failure.clone();
            async move {
                if Some(attempt.number) == succeed_at {
                    return Ok(Success {
                        value: (),
                        replayed: false,
                    });
                }
                if failure == Failure::TimedOut {
                    // Hang past the attempt timeout: the executor must cut the attempt short.
                    std::future::pending::<()>().await;
                }
                Err(failure)
            }
        })
        .await;
    (outcome, starts.into_inner().unwrap())
}

/// Expands `__retry_checks! { mode { context } check_1 check_2 ... }` with every check name.
///
/// The one list of check names: the `#[test]` generator and [`checks`] both read it, so the two
/// can never disagree.
#[doc(hidden)]
#[macro_export]
macro_rules! __with_retry_checks {
    ($mode:ident { $($context:tt)* }) => {
        $crate::__retry_checks! {
            $mode { $($context)* }
            key_is_fixed_before_the_first_attempt
            lost_reply_is_replayed_not_reapplied
            definitive_answers_are_not_retried
            transient_failures_are_retried
            plain_500_is_retried_only_when_configured
            attempts_stop_at_the_policy_maximum
            waits_stay_below_the_backoff_ceiling
            retries_of_synchronised_clients_spread_out
            retry_after_is_honoured
            retry_after_past_the_budget_stops_early
            budget_bounds_the_whole_operation
            dropping_the_operation_cancels_it
            nested_layers_share_one_budget
            nested_layer_cannot_outlive_its_caller
            quota_bounds_retries_during_an_outage
        }
    };
}

/// What the check list expands to: the named table, or `#[test]`s in a module `retry_suite`.
#[doc(hidden)]
#[macro_export]
macro_rules! __retry_checks {
    (table { $steps:ty } $($check:ident)*) => {
        $crate::__checks::table!(retry_suite: $(
            $check => $crate::$check::<$steps> as $crate::Check
        ),*)
    };
    (tests { #[$attr:meta] $steps:ty } $($check:ident)*) => {
        $crate::__checks::tests! {
            /// The shared retry checks (`retrykey_client_checks`), one `#[test]` each.
            mod retry_suite;
            #[$attr]
            $( fn $check() { $crate::$check::<$steps>(); } )*
        }
    };
}

/// Turns every retry check into a `#[test]` in a module named `retry_suite`, for the executor
/// built from `$steps` (a type implementing `retrykey_client::RetrySteps`): for example
/// `retrykey_client_checks::retry_suite!(retrykey_client::StandardSteps);` in a test file.
///
/// `retry_suite!(#[attribute] steps)` puts the attribute on every test; without one the tests
/// carry `#[cfg_attr(any(), ignore)]`, which is never active (`any()` is false).
#[macro_export]
macro_rules! retry_suite {
    (#[$attr:meta] $steps:ty) => {
        $crate::__with_retry_checks!(tests {
            #[$attr]
            $steps
        });
    };
    ($steps:ty) => {
        $crate::retry_suite!(
            #[cfg_attr(any(), ignore)]
            $steps
        );
    };
}
