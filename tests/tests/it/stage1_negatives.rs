//! Plain `cargo test` confirms, in-process, that each Stage 1 variant still fails its declared
//! contract and model checks: a variant that got fixed by accident turns this red.

use std::collections::BTreeSet;

use retrykey::{Ledger, Limits};
use retrykey_contract::failing_checks;

fn assert_fails_as_declared<L: Ledger + 'static>(variant: &str, make: fn(Limits) -> L) {
    let failing = failing_checks(&make);
    retrykey_tests::assert_fails_as_declared(variant, 1, &["contract::", "model::"], &failing);
}

// The correct store fails nothing: the baseline every variant is compared with.
#[test]
fn correct_store_fails_nothing() {
    assert_eq!(
        failing_checks(&retrykey::Store::with_limits),
        BTreeSet::new()
    );
}

// Each variant fails exactly the contract and model checks it declares.
#[test]
fn no_conflict_check_fails_as_declared() {
    assert_fails_as_declared("no-conflict-check", no_conflict_check::Store::with_limits);
}

#[test]
fn no_receipt_fails_as_declared() {
    assert_fails_as_declared("no-receipt", no_receipt::Store::with_limits);
}

#[test]
fn split_critical_section_fails_as_declared() {
    assert_fails_as_declared(
        "split-critical-section",
        split_critical_section::Store::with_limits,
    );
}

#[test]
fn capacity_before_lookup_fails_as_declared() {
    assert_fails_as_declared(
        "capacity-before-lookup",
        capacity_before_lookup::Store::with_limits,
    );
}

#[test]
fn evict_oldest_fails_as_declared() {
    assert_fails_as_declared("evict-oldest", evict_oldest::Store::with_limits);
}

#[test]
fn live_total_receipt_fails_as_declared() {
    assert_fails_as_declared("live-total-receipt", live_total_receipt::Store::with_limits);
}

#[test]
fn receipt_before_effect_fails_as_declared() {
    assert_fails_as_declared(
        "receipt-before-effect",
        receipt_before_effect::Store::with_limits,
    );
}

// Every variant under labs/ has a declaration the runner accepts: at least one check that
// catches it deterministically (in its own suite or under loom), none both required and by chance.
#[test]
fn every_variant_declares_a_deterministic_failure() {
    let variants = retrykey_tests::variants().expect("labs/ is readable");
    assert!(
        variants.len() >= 7,
        "the seven Stage 1 variants are present"
    );
    for (name, declared) in variants {
        assert_eq!(
            declared.problems(),
            Vec::<String>::new(),
            "{name}'s declaration"
        );
    }
}

// Loom still catches split-critical-section on every run: its only deterministic checks are loom
// models, so without this a variant fixed by accident would pass plain `cargo test`.
#[test]
fn split_critical_section_fails_its_loom_models() {
    let declared = retrykey_tests::declared("split-critical-section").expect("declaration");
    let run = retrykey_tests::cargo_test::loom_test("split-critical-section").expect("cargo runs");
    assert_eq!(
        run.diagnostics,
        Vec::<String>::new(),
        "the loom build is clean"
    );
    assert_eq!(
        run.failed, declared.loom_must_fail,
        "split-critical-section fails exactly its declared loom models"
    );
}

// Every variant stays a small, marked change of the file it mirrors.
#[test]
fn every_variant_is_one_small_marked_change() {
    for (name, declared) in retrykey_tests::variants().expect("labs/ is readable") {
        let problems =
            retrykey_tests::tidy::located::change_problems(&name, &declared).expect("sources");
        assert!(problems.is_empty(), "{name}: {problems:?}");
    }
}
