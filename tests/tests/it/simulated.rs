//! The simulator's variants: the ones it runs are exactly the ones that declare `simulate`, and
//! each is caught as declared (`just test-negatives` runs the same check with the rest).

use retrykey_sim::{Finding, Scenario};
use retrykey_tests::{simulated, variants};

#[test]
fn the_simulator_runs_exactly_the_variants_that_declare_it() {
    let mut declaring: Vec<String> = variants()
        .expect("the variants are declared")
        .into_iter()
        .filter(|(_, declared)| declared.simulate.is_some())
        .map(|(name, _)| name)
        .collect();
    declaring.sort();
    assert_eq!(declaring, simulated::VARIANTS);
    let error = simulated::run(Some("no-jitter"), Scenario::LostReply, 0).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("cancel-unsafe, fresh-key-per-retry"),
        "{error}"
    );
}

#[test]
fn each_declared_variant_fails_its_first_seed_by_its_rule_and_replays_it() {
    for (name, declared) in variants().expect("the variants are declared") {
        let Some(simulate) = declared.simulate else {
            continue;
        };
        let scenario: Scenario = simulate.scenario.parse().expect("a known scenario");
        let run = simulated::first_failure(Some(&name), scenario, 0..simulate.within)
            .expect("a variant the simulator runs")
            .unwrap_or_else(|| panic!("{name}: no failure within {} seeds", simulate.within));
        let Some(Finding::Broke(violation)) = &run.finding else {
            panic!("{name}: {:?}", run.finding);
        };
        assert_eq!(violation.rule.name(), simulate.rule, "{name}: {violation}");
        let again = simulated::run(Some(&name), scenario, run.seed).unwrap();
        assert_eq!(again.entries, run.entries, "{name}: seed {}", run.seed);
        // The correct stack keeps every rule on the same seed: the variant's one file is why.
        let correct = simulated::run(None, scenario, run.seed).unwrap();
        assert_eq!(correct.finding, None, "{name}: seed {}", run.seed);
    }
}
