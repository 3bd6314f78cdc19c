//! The shared retry checks: plain functions, turned into `#[test]`s by [`retry_suite!`](crate::retry_suite).
//!
//! Every check is generic over the executor's [`Parts`](crate::Parts), so the same names run
//! against the correct client (`Standard`) and against each negative variant under `labs/`.
//! Each builds its own current-thread runtime with tokio's clock paused: waits take no real
//! time and every run is identical, so a variant fails its checks on every run, not by chance.

mod classification;
mod identity;
mod layers;
mod quota;
mod timing;

use std::future::Future;
use std::sync::Mutex;

use tokio::time::Instant;

use crate::{Client, Failure, Outcome, Parts, Reply};

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

/// Every check for the pieces `P`, as `("retry_suite::<check>", check)`: the names `cargo test`
/// prints for the same checks, for running them in-process.
pub fn all<P: crate::Parts>() -> Vec<(&'static str, fn())> {
    crate::__with_retry_checks!(__retry_check_table!(P))
}

/// Runs `future` on a fresh current-thread runtime whose clock starts paused.
pub fn paused<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime builds")
        .block_on(future)
}

/// Runs one operation whose attempts fail with `failure` until attempt `succeed_at` (if any),
/// and returns the outcome and the instant each attempt started.
async fn timed<P: Parts>(
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
                    return Ok(Reply {
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

/// The list of check names, handed to `$callback` (the one place the names are written).
#[doc(hidden)]
#[macro_export]
macro_rules! __with_retry_checks {
    ($callback:ident ! ($($args:tt)*)) => {
        $crate::$callback! { ($($args)*)
            key_is_fixed_before_the_first_attempt,
            lost_reply_is_replayed_not_reapplied,
            definitive_answers_are_not_retried,
            transient_failures_are_retried,
            plain_500_is_retried_only_when_configured,
            attempts_stop_at_the_policy_maximum,
            waits_stay_below_the_backoff_ceiling,
            retries_of_synchronised_clients_spread_out,
            retry_after_is_honoured,
            retry_after_past_the_budget_stops_early,
            budget_bounds_the_whole_operation,
            dropping_the_operation_cancels_it,
            nested_layers_share_one_budget,
            nested_layer_cannot_outlive_its_caller,
            quota_bounds_retries_during_an_outage,
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __retry_check_table {
    (($parts:ty) $($check:ident),* $(,)?) => {
        vec![$((
            concat!("retry_suite::", stringify!($check)),
            $crate::checks::$check::<$parts> as fn(),
        )),*]
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __retry_suite_tests {
    (($parts:ty) $($check:ident),* $(,)?) => {
        /// The shared retry checks (`retrykey_client::checks`), one `#[test]` each.
        mod retry_suite {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[test]
                fn $check() {
                    $crate::checks::$check::<$parts>();
                }
            )*
        }
    };
}

/// Turns every shared retry check into a `#[test]` in a module named `retry_suite`, for the
/// executor built from `$parts` (a type implementing [`Parts`](crate::Parts)): for example
/// `retrykey_client::retry_suite!(retrykey_client::Standard);` in a test file.
#[macro_export]
macro_rules! retry_suite {
    ($parts:ty) => {
        $crate::__with_retry_checks!(__retry_suite_tests!($parts));
    };
}
