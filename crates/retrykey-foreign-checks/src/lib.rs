//! The Stage 9 behaviour as named checks, shared by `retrykey-foreign` and every variant of it
//! under `labs/`.
//!
//! Each check runs a provider and a checkout in one process, each on its own SQLite file
//! behind a real loopback server, and sends the checkout real requests. A crash is a panic at a
//! named point (the open transaction never commits, the connection closes without an answer);
//! a replica that comes back later is one whose clock runs past the lease. The checks assert on
//! what the two files hold: the provider's charges and their keys, the orders, their shipments,
//! and the answers the key keeps.
//!
//! # Example
//!
//! ```ignore
//! // tests/it/main.rs of the stage or of a variant: every check as a #[test].
//! retrykey_foreign_checks::foreign_suite!(retrykey_foreign_checks::ForeignUnderTest::correct());
//! ```
//!
//! # Reading order
//!
//! 1. `checks.rs`: the checks, one function per behaviour, each opened by the requirement.
//! 2. `rig.rs`: what a check starts and reads back.
//! 3. This file: the one list of check names and what it expands to.

pub mod checks;
mod rig;

use std::collections::BTreeSet;

pub use rig::{ForeignUnderTest, OpenBooks};

/// One check: it runs against a subject and panics with the requirement that subject breaks.
pub type Check = fn(&ForeignUnderTest);

// The scaffold the exported macros expand to, so a caller needs no dependency of its own on it.
#[doc(hidden)]
pub use retrykey_checks as __checks;

/// Every check, named as `cargo test` prints it (`foreign::<check>`), in the order they run.
pub const CHECKS: &[(&str, Check)] = &crate::__with_foreign_checks!(table {});

/// The checks that fail against `subject`, named as `cargo test` prints them.
pub fn failing_checks(subject: &ForeignUnderTest) -> BTreeSet<String> {
    retrykey_checks::failing_checks(CHECKS, |check| check(subject))
}

/// Expands `__foreign_checks! { mode { context } check_1 check_2 ... }` with every check name:
/// the one list that the `#[test]` generator and [`CHECKS`] both read.
#[doc(hidden)]
#[macro_export]
macro_rules! __with_foreign_checks {
    ($mode:ident { $($context:tt)* }) => {
        $crate::__foreign_checks! {
            $mode { $($context)* }
            one_order_one_charge_one_shipment
            transient_faults_charge_once
            unknown_charge_is_asked_again
            another_request_cannot_resume_the_operation
            late_charge_is_found_by_the_retry
            declined_card_is_kept
            crash_at_every_point_ends_once
            paused_replica_is_fenced_out
            completer_finishes_what_a_client_left
            completer_leaves_a_running_attempt_alone
            reaper_removes_only_finished_operations
        }
    };
}

/// What the check list expands to: `#[test]`s in a module `foreign`, or the named table.
#[doc(hidden)]
#[macro_export]
macro_rules! __foreign_checks {
    (table {} $($name:ident)*) => {
        $crate::__checks::table!(foreign: $( $name => $crate::checks::$name as $crate::Check ),*)
    };
    (tests { #[$attr:meta] $subject:expr } $($name:ident)*) => {
        $crate::__checks::tests! {
            mod foreign;
            #[$attr]
            $( fn $name() { $crate::checks::$name(&$subject); } )*
        }
    };
}

/// Every check as a `#[test]` in a module `foreign`, against `subject`.
///
/// `foreign_suite!(subject)` or `foreign_suite!(#[attribute] subject)`, where `subject` is a
/// [`ForeignUnderTest`] expression and the attribute goes on every test. Without an attribute
/// the tests carry `#[cfg_attr(any(), ignore)]`, which is never active (`any()` is false).
#[macro_export]
macro_rules! foreign_suite {
    (#[$attr:meta] $subject:expr) => {
        $crate::__with_foreign_checks!(tests {
            #[$attr]
            $subject
        });
    };
    ($subject:expr) => {
        $crate::foreign_suite!(
            #[cfg_attr(any(), ignore)]
            $subject
        );
    };
}
