//! The Stage 7 outbox behaviour as named checks, shared by the correct crates and every outbox
//! variant under `labs/`.
//!
//! Each check runs the whole path in one process: a document service on a fresh SQLite file
//! (its accept from the [`OutboxUnderTest`]), a consumer on another file behind a real loopback
//! server (its dedup from the [`OutboxUnderTest`]), and dispatchers between them (their delivery
//! from the [`OutboxUnderTest`]). A crash is a panic at a named point (the open transaction never
//! commits, the delivery's task dies, the connection closes without an answer); a dispatcher
//! that comes back later is one whose clock runs past the dead one's lease. The checks assert
//! on what the two files hold: the jobs, the events and their states, the conversions.
//!
//! # Example
//!
//! ```ignore
//! // tests/it/main.rs of an outbox crate or of a variant: every check as a #[test].
//! retrykey_outbox_checks::outbox_suite!(retrykey_outbox_checks::OutboxUnderTest::correct());
//! ```
//!
//! # Reading order
//!
//! 1. `checks.rs`: the checks, one function per behaviour, each opened by the requirement.
//! 2. `rig.rs`: what a check starts and reads back.
//! 3. This file: the one list of check names and what it expands to, on the scaffold
//!    every checks crate shares (`retrykey-checks`).
//! 4. [`faults`]: the same rule held with real processes, killed, stopped and restarted.

pub mod checks;
pub mod faults;
mod rig;

use std::collections::BTreeSet;

pub use rig::OutboxUnderTest;

/// One check: it runs against a subject and panics with the requirement that subject breaks.
pub type Check = fn(&OutboxUnderTest);

// The scaffold the exported macros expand to, so a caller needs no dependency of its own on it.
#[doc(hidden)]
pub use retrykey_checks as __checks;

/// Every check, named as `cargo test` prints it (`outbox::<check>`), in the order they run.
pub const CHECKS: &[(&str, Check)] = &crate::__with_outbox_checks!(table {});

/// The checks that fail against `subject`, named as `cargo test` prints them (`outbox::<check>`).
pub fn failing_checks(subject: &OutboxUnderTest) -> BTreeSet<String> {
    retrykey_checks::failing_checks(CHECKS, |check| check(subject))
}

/// Expands `__outbox_checks! { mode { context } check_1 check_2 ... }` with every check name.
///
/// The one list of check names: the `#[test]` generator and [`CHECKS`] both read it, so the two
/// can never disagree.
#[doc(hidden)]
#[macro_export]
macro_rules! __with_outbox_checks {
    ($mode:ident { $($context:tt)* }) => {
        $crate::__outbox_checks! {
            $mode { $($context)* }
            job_and_event_commit_together
            every_accepted_job_is_converted_once
            redelivery_converts_once
            consumer_crash_after_converting_converts_once
            delivered_only_after_acknowledgement
            dispatcher_crash_between_send_and_mark_redelivers
            two_dispatchers_share_the_work
            stale_dispatcher_cannot_settle_after_takeover
        }
    };
}

/// What the check list expands to: `#[test]`s in a module `outbox`, or the named table.
#[doc(hidden)]
#[macro_export]
macro_rules! __outbox_checks {
    (table {} $($name:ident)*) => {
        $crate::__checks::table!(outbox: $( $name => $crate::checks::$name as $crate::Check ),*)
    };
    (tests { #[$attr:meta] $subject:expr } $($name:ident)*) => {
        $crate::__checks::tests! {
            mod outbox;
            #[$attr]
            $( fn $name() { $crate::checks::$name(&$subject); } )*
        }
    };
}

/// Every check as a `#[test]` in a module `outbox`, against `subject`.
///
/// `outbox_suite!(subject)` or `outbox_suite!(#[attribute] subject)`, where `subject` is an
/// [`OutboxUnderTest`] expression and the attribute goes on every test. Without an attribute the
/// tests carry `#[cfg_attr(any(), ignore)]`, which is never active (`any()` is false).
#[macro_export]
macro_rules! outbox_suite {
    (#[$attr:meta] $subject:expr) => {
        $crate::__with_outbox_checks!(tests {
            #[$attr]
            $subject
        });
    };
    ($subject:expr) => {
        $crate::outbox_suite!(
            #[cfg_attr(any(), ignore)]
            $subject
        );
    };
}
