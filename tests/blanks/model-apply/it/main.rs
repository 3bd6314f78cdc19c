//! The exercise under its checks: `just check-exercise` runs them in teaching order.
//!
//! Each check runs steps against the core's `Store` and the copy's reference model and compares
//! every reply and the final state: first hand-written scripts, one rule each, then the random
//! sequences of the property test. The store is correct, so a difference is the model's.

mod model {
    use model_apply::{Step, compare};
    use retrykey::Store;

    /// Apply `units` of job `job` (0 convert, 1 resize) under key `key` (0 is op-1).
    fn apply(key: usize, job: usize, units: u64) -> Step {
        Step::Apply { key, job, units }
    }

    /// Read the receipt of key `key`.
    fn receipt(key: usize) -> Step {
        Step::Receipt { key }
    }

    /// The model and the store agree on every step of `script`, and on the final state.
    fn agree(script: &[Step]) {
        if let Err(difference) = compare(&Store::with_limits, script) {
            let steps: Vec<String> = script.iter().map(|step| format!("{step:?}")).collect();
            panic!("script: {}\n{difference}", steps.join("; "));
        }
    }

    #[test]
    fn new_keys_are_new_operations() {
        agree(&[
            apply(0, 0, 5),
            apply(1, 1, 3),
            receipt(0),
            receipt(1),
            receipt(2),
        ]);
    }

    #[test]
    fn a_retry_is_a_replay_of_the_first_receipt() {
        agree(&[
            apply(0, 0, 5),
            apply(0, 0, 5),
            apply(1, 0, 2),
            apply(0, 0, 5),
            receipt(0),
        ]);
    }

    #[test]
    fn a_changed_request_conflicts() {
        agree(&[
            apply(0, 0, 5),
            apply(0, 1, 5),
            apply(0, 0, 6),
            apply(1, 0, 1),
            receipt(0),
        ]);
    }

    #[test]
    fn a_full_ledger_refuses_new_keys_and_still_replays() {
        agree(&[
            apply(0, 0, 1),
            apply(1, 0, 1),
            apply(2, 0, 1),
            apply(3, 0, 1),
            receipt(3),
            apply(0, 0, 1),
            apply(0, 1, 1),
        ]);
    }

    #[test]
    fn the_ceiling_refuses_without_effect() {
        agree(&[
            apply(0, 0, 9),
            apply(1, 0, 9),
            apply(2, 0, 3),
            receipt(2),
            apply(2, 0, 2),
        ]);
    }

    #[test]
    fn matches_reference_model() {
        model_apply::matches_reference_model(&Store::with_limits);
    }
}
