//! The Stage 6 replica behaviour as named checks, shared by the correct crate and every Stage 6
//! variant under `labs/`.
//!
//! Each check starts several replicas in one process. A replica is what a `payments` process
//! is: its own store opened through the [`ReplicasUnderTest`] on one shared SQLite file, its
//! own payments handler charging into that file, its own Idempotency-Key layer, its own server
//! on 127.0.0.1. Replicas share nothing but the file, so whatever one learns from another, it
//! learns from the database, as separate processes would. The checks assert on what the file
//! holds (the charges, and each key's token and owner), not only on status codes.
//!
//! No check depends on timing luck. A first attempt is parked at a gate until the check lets it
//! go; a replica "paused past its lease" is one whose peer's clock runs ahead
//! ([`retrykey_program::Clock::ahead`]), not one that sleeps; a "killed" replica is one whose
//! runtime is shut down under it. Every wait is bounded, so a hang fails the check.
//!
//! # Example
//!
//! ```ignore
//! // tests/it/main.rs of the replicas crate or of a variant: every check as a #[test].
//! retrykey_replicas_checks::replicas_suite!(
//!     retrykey_replicas_checks::ReplicasUnderTest::correct()
//! );
//! ```
//!
//! # Reading order
//!
//! 1. `checks.rs`: the checks, one function per behaviour, each opened by the requirement.
//! 2. `rig.rs`: what a check starts (the shared file, replicas opened through the
//!    [`ReplicasUnderTest`], a replica killed mid-request) and what it reads back from the file.
//! 3. `hold.rs`: the gate in front of each replica's handler and the counting store that tells
//!    a check when a duplicate is waiting; `variant.rs`: a variant's claim or fence in the seam.
//! 4. This file: the one list of check names and what it expands to, on the scaffold
//!    every checks crate shares (`retrykey-checks`).

pub mod checks;
mod hold;
mod rig;
mod variant;

use std::collections::BTreeSet;

pub use rig::{OpenReplica, ReplicasUnderTest};
pub use variant::{VariantClaim, VariantFence};

/// One check: it runs against a subject and panics with the requirement that subject breaks.
pub type Check = fn(&ReplicasUnderTest);

// The scaffold the exported macros expand to, so a caller needs no dependency of its own on it.
#[doc(hidden)]
pub use retrykey_checks as __checks;

/// Every check, named as `cargo test` prints it (`replicas::<check>`), in the order they run.
pub const CHECKS: &[(&str, Check)] = &crate::__with_replicas_checks!(table {});

/// The checks that fail against `subject`, named as `cargo test` prints them
/// (`replicas::<check>`).
pub fn failing_checks(subject: &ReplicasUnderTest) -> BTreeSet<String> {
    retrykey_checks::failing_checks(CHECKS, |check| check(subject))
}

/// Expands `__replicas_checks! { mode { context } check_1 check_2 ... }` with every check name.
///
/// The one list of check names: the `#[test]` generator and [`CHECKS`] both read it, so the two
/// can never disagree.
#[doc(hidden)]
#[macro_export]
macro_rules! __with_replicas_checks {
    ($mode:ident { $($context:tt)* }) => {
        $crate::__replicas_checks! {
            $mode { $($context)* }
            spray_of_one_key_charges_once
            duplicate_on_another_replica_gets_the_first_answer
            paused_owner_cannot_charge_after_takeover
            abandoned_key_is_taken_over_after_its_lease
            full_shared_file_refuses_new_keys
        }
    };
}

/// What the check list expands to: `#[test]`s in a module `replicas`, or the named table.
#[doc(hidden)]
#[macro_export]
macro_rules! __replicas_checks {
    (table {} $($name:ident)*) => {
        $crate::__checks::table!(replicas: $( $name => $crate::checks::$name as $crate::Check ),*)
    };
    (tests { #[$attr:meta] $subject:expr } $($name:ident)*) => {
        $crate::__checks::tests! {
            mod replicas;
            #[$attr]
            $( fn $name() { $crate::checks::$name(&$subject); } )*
        }
    };
}

/// Every check as a `#[test]` in a module `replicas`, against `subject`.
///
/// `replicas_suite!(subject)` or `replicas_suite!(#[attribute] subject)`, where `subject` is a
/// [`ReplicasUnderTest`] expression and the attribute goes on every test. Without an attribute the tests
/// carry `#[cfg_attr(any(), ignore)]`, which is never active (`any()` is false).
#[macro_export]
macro_rules! replicas_suite {
    (#[$attr:meta] $subject:expr) => {
        $crate::__with_replicas_checks!(tests {
            #[$attr]
            $subject
        });
    };
    ($subject:expr) => {
        $crate::replicas_suite!(
            #[cfg_attr(any(), ignore)]
            $subject
        );
    };
}
