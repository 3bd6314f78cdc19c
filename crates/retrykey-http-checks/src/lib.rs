//! The Stage 3 checks: named behaviours of the Idempotency-Key layer, run over real TCP.
//!
//! Each check is a plain function taking a [`Subject`] (which engine and which store to put
//! in the layer); [`http_suite!`] turns all of them into `#[test]`s named
//! `http_suite::<check>`, identically for the correct crate and every variant under `labs/`,
//! and [`CHECKS`] lists them for in-process runs. Every check asserts on the effect (the
//! charge count), not only on status codes, and none depends on timing luck: concurrency is
//! forced with gates (a handler that waits to be released, a store that holds reservations
//! until every racer has looked).

mod checks;
mod rig;
mod shop;

pub use checks::*;
pub use rig::Subject;

/// Lists every check once, and hands the list to [`__http_checks_expand!`] in one of its modes.
#[doc(hidden)]
#[macro_export]
macro_rules! __http_checks_list {
    ($mode:ident [$($args:tt)*]) => {
        $crate::__http_checks_expand! { $mode [$($args)*]
            concurrent_duplicates_run_the_handler_once,
            duplicates_wait_for_the_first_and_get_its_answer,
            changed_body_under_a_used_key_is_422,
            changed_body_while_the_first_runs_is_422,
            json_key_order_and_whitespace_do_not_matter,
            get_with_a_key_is_never_stored,
            keyless_posts_pass_through,
            required_key_missing_is_400,
            quoted_and_bare_keys_are_the_same_key,
            invalid_keys_are_400_and_change_nothing,
            oversized_body_is_413_before_the_handler,
            replay_keeps_status_headers_and_body_but_not_cookies,
            server_error_releases_the_key,
            waiters_get_503_when_the_first_attempt_fails,
            wait_deadline_answers_503_with_retry_after,
            reject_policy_answers_409_at_once,
            callers_never_share_keys,
            disconnected_first_request_still_completes,
            waiting_client_that_leaves_changes_nothing,
            panicking_handler_releases_the_key,
            full_store_refuses_new_keys_and_keeps_live_records,
            expired_records_are_swept_and_run_afresh,
            large_response_replays_status_and_location_only,
            broken_response_body_keeps_a_summary_record,
            failing_store_refuses_before_any_work,
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __http_checks_expand {
    (tests [$subject:expr] $($name:ident),* $(,)?) => {
        mod http_suite {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[test]
                fn $name() {
                    $crate::$name(&$subject);
                }
            )*
        }
    };
    (table [] $($name:ident),* $(,)?) => {
        /// Every check with its name, for running them in-process (see `tests/` at the root).
        pub const CHECKS: &[(&str, fn(&$crate::Subject))] = &[
            $( (stringify!($name), $crate::$name as fn(&$crate::Subject)), )*
        ];
    };
}

/// Instantiates every check as a `#[test]` in a module `http_suite`, against `$subject`.
///
/// ```ignore
/// retrykey_http_checks::http_suite!(retrykey_http_checks::Subject::standard());
/// ```
#[macro_export]
macro_rules! http_suite {
    ($subject:expr) => {
        $crate::__http_checks_list! { tests [$subject] }
    };
}

__http_checks_list! { table [] }
