//! Plain `cargo test` confirms, in-process, that each Stage 3 variant still fails exactly its
//! declared retry checks: a variant fixed by accident, or broken in a new way, turns this red.

use std::collections::BTreeSet;

use retrykey_client::{RetrySteps, StandardSteps};
use retrykey_client_checks::failing_checks;

mod budget_reset {
    retrykey_client_checks::variant_steps!(
        Variant,
        child_budget = budget_reset_per_layer::child_budget
    );
}
mod fresh_key {
    retrykey_client_checks::variant_steps!(Variant, execute = fresh_key_per_retry::execute);
}
mod no_jitter {
    retrykey_client_checks::variant_steps!(Variant, delay = no_jitter::full_jitter);
}
mod retry_definitive {
    retrykey_client_checks::variant_steps!(Variant, classify = retry_definitive_errors::classify);
}

fn assert_fails_as_declared<P: RetrySteps>(variant: &str) {
    retrykey_tests::assert_fails_as_declared(
        variant,
        3,
        &["retry_suite::"],
        &failing_checks::<P>(),
    );
}

// The correct client fails no retry check: the baseline every variant is compared with.
#[test]
fn correct_client_fails_nothing() {
    assert_eq!(failing_checks::<StandardSteps>(), BTreeSet::new());
}

// Each variant fails exactly the retry checks it declares.
#[test]
fn fresh_key_per_retry_fails_as_declared() {
    assert_fails_as_declared::<fresh_key::Variant>("fresh-key-per-retry");
}

#[test]
fn budget_reset_per_layer_fails_as_declared() {
    assert_fails_as_declared::<budget_reset::Variant>("budget-reset-per-layer");
}

#[test]
fn retry_definitive_errors_fails_as_declared() {
    assert_fails_as_declared::<retry_definitive::Variant>("retry-definitive-errors");
}

#[test]
fn no_jitter_fails_as_declared() {
    assert_fails_as_declared::<no_jitter::Variant>("no-jitter");
}
