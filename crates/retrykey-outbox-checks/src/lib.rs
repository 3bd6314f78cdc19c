//! The Stage 5 outbox behaviour as named checks, shared by the correct crates and every outbox
//! variant under `labs/`.
//!
//! Each check runs the whole path in one process: a document service on a fresh SQLite file
//! (its accept from the [`Subject`]), a consumer on another file behind a real loopback server
//! (its dedup from the [`Subject`]), and dispatchers between them (their delivery from the
//! [`Subject`]). A crash is a panic at a named point (the open transaction never commits, the
//! delivery's task dies, the connection closes without an answer); a dispatcher that comes
//! back later is one whose clock runs past the dead one's lease. The checks assert on what the
//! two files hold: the jobs, the events and their states, the conversions.
//!
//! # Example
//!
//! ```ignore
//! // tests/it/main.rs of an outbox crate or of a variant: every check as a #[test].
//! retrykey_outbox_checks::outbox_suite!(retrykey_outbox_checks::Subject::correct());
//! ```
//!
//! # Reading order
//!
//! 1. `checks.rs`: the checks, one function per behaviour, each opened by the requirement.
//! 2. `rig.rs`: what a check starts and reads back.
//! 3. This file: the one list of check names and what it expands to.
//! 4. [`faults`]: the same rule held with real processes, killed, stopped and restarted.

pub mod checks;
pub mod faults;
mod rig;

use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};

pub use rig::Subject;

/// One check: it runs against a subject and panics with the requirement that subject breaks.
pub type Check = fn(&Subject);

/// Every check, named as `cargo test` prints it (`outbox::<check>`), in the order they run.
pub const CHECKS: &[(&str, Check)] = crate::__with_outbox_checks!(table {});

/// The checks that fail against `subject`, named as `cargo test` prints them (`outbox::<check>`).
pub fn failing_checks(subject: &Subject) -> BTreeSet<String> {
    CHECKS
        .iter()
        .filter(|(_, check)| catch_unwind(AssertUnwindSafe(|| check(subject))).is_err())
        .map(|(name, _)| (*name).to_string())
        .collect()
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
        &[$( (concat!("outbox::", stringify!($name)), $crate::checks::$name as $crate::Check) ),*]
    };
    (tests { $subject:expr } $($name:ident)*) => {
        mod outbox {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[test]
                fn $name() {
                    $crate::checks::$name(&$subject);
                }
            )*
        }
    };
}

/// Every check as a `#[test]` in a module `outbox`, against `subject`.
///
/// `outbox_suite!(subject)`, where `subject` is a [`Subject`] expression.
#[macro_export]
macro_rules! outbox_suite {
    ($subject:expr) => {
        $crate::__with_outbox_checks!(tests { $subject });
    };
}
