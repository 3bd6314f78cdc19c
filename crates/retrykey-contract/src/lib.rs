//! The ledger contract as named checks, shared by every backend and every negative variant.
//!
//! Each check is a plain function that builds fresh ledgers with a constructor and panics with a
//! message naming the broken requirement. One macro turns the whole list into `#[test]`s, so the
//! same names (`contract::lost_reply_then_retry`, ...) print for the in-memory store, a database
//! backend or a deliberately broken variant.
//!
//! # Reading order
//!
//! 1. `checks.rs`: the contract, one function per behaviour; read any check on its own.
//! 2. `fixtures.rs`: the small helpers every check uses (keys, requests, stored state).
//! 3. `suites.rs`: how one macro turns the list of names in this file into `#[test]`s, with the
//!    scaffold every checks crate shares (`retrykey-checks`).
//! 4. `model.rs`: the property test, which compares a ledger with a plain reference model.
//! 5. `concurrency.rs` and `loom_models.rs`: the same key from many threads, by stress and by
//!    loom's exhaustive interleavings.
//!
//! # Example
//!
//! ```
//! // tests/it/main.rs of any crate with a Ledger: the contract, model and stress suites.
//! retrykey_contract::ledger_suite!(retrykey::Store::with_limits);
//! # fn main() {}
//! ```
//!
//! The constructor receives the [`Limits`] a check needs and must return an empty ledger that
//! shares nothing with the ledgers of other calls.

pub mod checks;
pub mod concurrency;
pub mod fixtures;
#[cfg(loom)]
pub mod loom_models;
pub mod model;
mod suites;
pub mod values;

use std::collections::BTreeSet;

pub use retrykey::Limits;
pub use retrykey_checks::run_check;

// The scaffold the exported macros expand to, so a caller needs no dependency of its own on it.
#[doc(hidden)]
pub use retrykey_checks as __checks;

/// One contract check: it builds its ledgers with the constructor it is given and panics with
/// the requirement those ledgers break.
pub type Check<L> = fn(&dyn Fn(Limits) -> L);

/// Every contract check, named as `cargo test` prints it (`contract::<check>`), in the order
/// they run.
pub fn checks<L: retrykey::Ledger>() -> Vec<(&'static str, Check<L>)> {
    __with_contract_checks!(table { L }).to_vec()
}

/// The contract and model checks that fail for the ledgers `make` builds, named as `cargo test`
/// prints them (`contract::<check>`, `model::matches_reference_model`).
pub fn failing_checks<L>(make: &(dyn Fn(Limits) -> L + Sync)) -> BTreeSet<String>
where
    L: retrykey::Ledger + 'static,
{
    let mut failing = retrykey_checks::failing_checks(&checks::<L>(), |check| check(make));
    if run_check(|| model::matches_reference_model(make)).is_err() {
        failing.insert("model::matches_reference_model".to_string());
    }
    failing
}

/// Expands `__contract_checks! { mode { context } check_1 check_2 ... }` with every check name.
///
/// The one list of check names: the `#[test]` generator and [`checks`] both read it, so the two
/// can never disagree.
#[doc(hidden)]
#[macro_export]
macro_rules! __with_contract_checks {
    ($mode:ident { $($context:tt)* }) => {
        $crate::__contract_checks! {
            $mode { $($context)* }
            lost_reply_then_retry
            changed_units_conflicts
            changed_job_conflicts
            near_miss_requests_conflict
            conflict_leaves_state_unchanged
            new_key_is_new_operation
            historical_receipt_keeps_original_total
            replay_marks_only_delivery
            invalid_keys_are_rejected
            invalid_requests_are_rejected
            capacity_rejects_new_operation
            replay_at_capacity_succeeds
            ceiling_rejects_without_effect
            exact_ceiling_is_accepted
            rejected_operation_leaves_no_record
            concurrent_same_key_one_effect
            concurrent_distinct_keys_lose_no_update
        }
    };
}
