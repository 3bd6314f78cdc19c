//! The simulator's variants: the ones it runs are exactly the ones that declare `simulate`, and
//! each is caught as declared (`just test-negatives` runs the same check with the rest).

use retrykey_sim::{Finding, SimScenario};
use retrykey_tests::scenario::SimulatorScenario;
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
    let error = simulated::run(Some("no-jitter"), SimulatorScenario::ALL[0], 0).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("cancel-unsafe, fresh-foreign-key, fresh-key-per-retry"),
        "{error}"
    );
}

#[test]
fn each_declared_variant_fails_its_first_seed_by_its_rule_and_replays_it() {
    for (name, declared) in variants().expect("the variants are declared") {
        let Some(simulate) = declared.simulate else {
            continue;
        };
        let run = simulated::caught_as_declared(&name, &simulate)
            .unwrap_or_else(|problem| panic!("{name}: {problem}"));
        let Some(Finding::Broke(violation)) = &run.finding else {
            panic!("{name}: {:?}", run.finding);
        };
        assert_eq!(violation.rule.name(), simulate.rule, "{name}: {violation}");
        // The correct stack keeps every rule on the same seed: the variant's one file is why.
        let scenario: SimulatorScenario = run.scenario.parse().unwrap();
        let correct = simulated::run(None, scenario, run.seed).unwrap();
        assert_eq!(correct.finding, None, "{name}: seed {}", run.seed);
    }
}

/// The seed chapter 8 draws: the first restart seed whose double charge is one operation's.
const BOOK_SEED: u64 = 3;

#[test]
fn the_books_restart_picture_is_the_simulators_own() {
    let restart = SimulatorScenario::Payments(SimScenario::Restart);
    let run = simulated::run(None, restart, BOOK_SEED).unwrap();
    let path = retrykey_tests::workspace_root().join("docs/src/diagrams/ch08-restart.diag");
    let committed = std::fs::read_to_string(&path).expect("the chapter's diagram source reads");
    assert_eq!(
        committed,
        retrykey_sim::trace::diagram(&run),
        "docs/src/diagrams/ch08-restart.diag is not what the simulator draws for seed \
         {BOOK_SEED}; run `just simulate --scenario restart --seed {BOOK_SEED} --diag \
         docs/src/diagrams/ch08-restart.diag` and `just diagrams`"
    );
}

#[test]
fn every_trace_draws_as_a_sequence_diagram() {
    let mut runs: Vec<_> = SimulatorScenario::ALL
        .into_iter()
        .flat_map(|scenario| (0..4).map(move |seed| simulated::run(None, scenario, seed)))
        .collect::<Result<_, _>>()
        .unwrap();
    for (variant, declared) in variants().expect("the variants are declared") {
        let Some(simulate) = declared.simulate else {
            continue;
        };
        let scenario: SimulatorScenario = simulate.scenario.parse().unwrap();
        let failing = simulated::first_failure(Some(&variant), scenario, 0..simulate.within)
            .unwrap()
            .expect("each variant fails within the seeds it declares");
        runs.push(failing);
    }
    for run in runs {
        let source = retrykey_sim::trace::diagram(&run);
        let diagram = retrykey_tests::diagrams::parse(&source).unwrap_or_else(|error| {
            panic!("seed {} of {}: {error}\n{source}", run.seed, run.scenario)
        });
        let svg = diagram.render();
        assert!(svg.starts_with("<svg"), "seed {}", run.seed);
        assert!(
            svg.contains(">server<"),
            "seed {}: the server's lane",
            run.seed
        );
        // A failing run is drawn around its keys: every attempt it shows carries one of them.
        if let Some(Finding::Broke(violation)) = &run.finding {
            for line in source.lines().filter(|l| l.starts_with("msg client")) {
                if line.contains("key ") {
                    assert!(
                        violation
                            .keys
                            .iter()
                            .any(|key| line.contains(retrykey_sim::short_key(key))),
                        "seed {}: {line}",
                        run.seed
                    );
                }
            }
        }
    }
}

// `simulate --help` names every variant `--variant` accepts, from the list the simulator checks.
#[test]
fn simulate_help_names_every_variant_it_runs() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_simulate"))
        .arg("--help")
        .output()
        .expect("the simulator runs");
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    // What follows the flag's own line, the last place it is named.
    let listed = help.rsplit("--variant NAME").next().unwrap_or_default();
    for variant in retrykey_tests::simulated::VARIANTS {
        assert!(listed.contains(variant), "{variant} in:\n{help}");
    }
}
