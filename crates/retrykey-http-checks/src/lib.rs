//! The Idempotency-Key layer's behaviour as named checks, shared by the correct crate and every
//! Stage 4 variant under `labs/`.
//!
//! Each check is a plain function taking a [`LayerUnderTest`] (which engine and which store to put in
//! the layer) and panics with a message naming the broken requirement. One macro turns the whole
//! list into `#[test]`s, so the same names (`http_suite::server_error_releases_the_key`, ...)
//! print for the correct layer and for a deliberately broken variant; [`failing_checks`] runs the
//! same list in-process. Every check runs a real server on 127.0.0.1 and asserts on the effect
//! (the charge count), not only on status codes; none depends on timing luck: concurrency is
//! forced with gates (a handler that waits to be released, a store that holds reservations until
//! every racer has looked).
//!
//! # Example
//!
//! ```ignore
//! // tests/it/main.rs of the HTTP crate or of a variant: every check as a #[test].
//! retrykey_http_checks::http_suite!(retrykey_http_checks::LayerUnderTest::correct());
//! ```
//!
//! # Reading order
//!
//! 1. `checks.rs`: the checks, one function per behaviour, each opened by the requirement.
//! 2. `rig.rs`: what a check starts (the [`LayerUnderTest`]'s layer in front of a server, a store
//!    probe that forces races, raw TCP for clients that leave).
//! 3. `shop.rs`: the handler behind the layer, which counts charges and obeys fault headers.
//! 4. This file: the one list of check names and what it expands to, on the scaffold
//!    every checks crate shares (`retrykey-checks`).

pub mod checks;
mod rig;
mod shop;

use std::collections::BTreeSet;

pub use rig::LayerUnderTest;

/// One check: it runs against a subject and panics with the requirement that subject breaks.
pub type Check = fn(&LayerUnderTest);

// The scaffold the exported macros expand to, so a caller needs no dependency of its own on it.
#[doc(hidden)]
pub use retrykey_checks as __checks;

/// Every check, named as `cargo test` prints it (`http_suite::<check>`), in the order they run.
pub const CHECKS: &[(&str, Check)] = &crate::__with_http_checks!(table {});

/// The checks that fail against `subject`, named as `cargo test` prints them
/// (`http_suite::<check>`).
pub fn failing_checks(subject: &LayerUnderTest) -> BTreeSet<String> {
    retrykey_checks::failing_checks(CHECKS, |check| check(subject))
}

/// Expands `__http_checks! { mode { context } check_1 check_2 ... }` with every check name.
///
/// The one list of check names: the `#[test]` generator and [`CHECKS`] both read it, so the two
/// can never disagree.
#[doc(hidden)]
#[macro_export]
macro_rules! __with_http_checks {
    ($mode:ident { $($context:tt)* }) => {
        $crate::__http_checks! {
            $mode { $($context)* }
            concurrent_duplicates_run_the_handler_once
            duplicates_wait_for_the_first_and_get_its_answer
            changed_body_under_a_used_key_is_422
            changed_body_while_the_first_runs_is_422
            json_key_order_and_whitespace_do_not_matter
            get_with_a_key_is_never_stored
            keyless_posts_pass_through
            required_key_missing_is_400
            quoted_and_bare_keys_are_the_same_key
            invalid_keys_are_400_and_change_nothing
            oversized_body_is_413_before_the_handler
            replay_keeps_status_headers_and_body_but_not_cookies
            server_error_releases_the_key
            first_attempt_carries_its_reservation
            waiters_get_503_when_the_first_attempt_fails
            wait_deadline_answers_503_with_retry_after
            reject_policy_answers_409_at_once
            callers_never_share_keys
            disconnected_first_request_still_completes
            leaving_during_the_reservation_strands_no_key
            waiting_client_that_leaves_changes_nothing
            panicking_handler_releases_the_key
            full_store_refuses_new_keys_and_keeps_live_records
            expired_records_are_swept_and_run_afresh
            large_response_replays_status_and_location_only
            broken_response_body_keeps_a_summary_record
            failing_store_refuses_before_any_work
        }
    };
}

/// What the check list expands to: `#[test]`s in a module `http_suite`, or the named table.
#[doc(hidden)]
#[macro_export]
macro_rules! __http_checks {
    (table {} $($name:ident)*) => {
        $crate::__checks::table!(http_suite: $( $name => $crate::checks::$name as $crate::Check ),*)
    };
    (tests { #[$attr:meta] $subject:expr } $($name:ident)*) => {
        $crate::__checks::tests! {
            mod http_suite;
            #[$attr]
            $( fn $name() { $crate::checks::$name(&$subject); } )*
        }
    };
}

/// Every check as a `#[test]` in a module `http_suite`, against `subject`.
///
/// `http_suite!(subject)` or `http_suite!(#[attribute] subject)`, where `subject` is a
/// [`LayerUnderTest`] expression and the attribute goes on every test: a suite that needs a database
/// passes `#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL")]`, so that without one its
/// tests are counted as ignored, never as passed. Without an attribute the tests carry
/// `#[cfg_attr(any(), ignore)]`, which is never active (`any()` is false).
#[macro_export]
macro_rules! http_suite {
    (#[$attr:meta] $subject:expr) => {
        $crate::__with_http_checks!(tests {
            #[$attr]
            $subject
        });
    };
    ($subject:expr) => {
        $crate::http_suite!(
            #[cfg_attr(any(), ignore)]
            $subject
        );
    };
}
