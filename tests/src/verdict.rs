//! How a variant's test run compares with what it declares and with the suites it mirrors.

use std::collections::{BTreeMap, BTreeSet};

use crate::test_output::TestRun;

/// The differences between a run and a declaration, one sentence each.
pub fn compare(
    run: &TestRun,
    must_fail: &BTreeSet<String>,
    may_fail: &BTreeSet<String>,
    label: &str,
) -> Vec<String> {
    let mut problems: Vec<String> = run
        .diagnostics
        .iter()
        .map(|line| format!("{label}does not compile cleanly: {line}"))
        .collect();
    for test in must_fail {
        if run.ignored.contains(test) {
            problems.push(format!("{label}declared check {test} was skipped"));
        } else if !run.ran.contains(test) {
            problems.push(format!("{label}declared check {test} did not run"));
        } else if !run.failed.contains(test) {
            problems.push(format!("{label}{test} passed but must fail"));
        }
    }
    for test in run.failed.difference(must_fail) {
        if !may_fail.contains(test) {
            problems.push(format!("{label}{test} failed but is not declared"));
        }
    }
    problems
}

/// Whether the variant ran, suite by suite (`contract::`, `http_suite::`, ...), the very checks
/// the mirrored package holds: a variant that drops or renames a check proves less than it says.
pub fn same_checks(
    run: &TestRun,
    correct: &BTreeSet<String>,
    package: &str,
    label: &str,
) -> Vec<String> {
    let by_suite = |names: &mut dyn Iterator<Item = &String>| {
        let mut suites: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for name in names {
            if let Some((suite, _)) = name.split_once("::") {
                suites
                    .entry(suite.to_string())
                    .or_default()
                    .insert(name.clone());
            }
        }
        suites
    };
    // The mirrored package may hold a suite once per backend, in a module of its one test
    // program (`contract_sqlite::contract::x`): a check is its last two segments.
    let correct: BTreeSet<String> = correct.iter().map(|name| suite_check(name)).collect();
    let correct = by_suite(&mut correct.iter());
    let variant = by_suite(&mut run.ran.iter().chain(&run.ignored));
    let mut problems = Vec::new();
    for (suite, names) in &variant {
        let Some(expected) = correct.get(suite) else {
            problems.push(format!(
                "{label}runs a suite {suite}:: that {package} does not have"
            ));
            continue;
        };
        for missing in expected.difference(names) {
            problems.push(format!(
                "{label}does not run {missing}, which {package} runs"
            ));
        }
        for extra in names.difference(expected) {
            problems.push(format!("{label}runs {extra}, which {package} does not"));
        }
    }
    problems
}

/// A check's name as its suite gives it (`contract::x`), without the modules around the suite.
fn suite_check(name: &str) -> String {
    let mut parts = name.rsplitn(3, "::");
    match (parts.next(), parts.next()) {
        (Some(check), Some(suite)) => format!("{suite}::{check}"),
        _ => name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|name| name.to_string()).collect()
    }

    fn run(passed: &[&str], failed: &[&str], ignored: &[&str]) -> TestRun {
        TestRun {
            ran: set(passed).union(&set(failed)).cloned().collect(),
            failed: set(failed),
            ignored: set(ignored),
            ..TestRun::default()
        }
    }

    // A run that fails exactly the declared checks (chance-only failures aside) has no problem.
    #[test]
    fn exact_failures_hold() {
        let run = run(&["contract::a"], &["contract::b", "stress::c"], &[]);
        let problems = compare(&run, &set(&["contract::b"]), &set(&["stress::c"]), "");
        assert_eq!(problems, Vec::<String>::new());
    }

    // A declared check that passed, was skipped or never ran, and an undeclared failure, are each named.
    #[test]
    fn every_departure_is_named() {
        let run = run(&["contract::a"], &["contract::x"], &["connections::p"]);
        let must = set(&["contract::a", "connections::p", "model::m"]);
        let problems = compare(&run, &must, &BTreeSet::new(), "");
        assert_eq!(
            problems,
            vec![
                "declared check connections::p was skipped".to_string(),
                "contract::a passed but must fail".to_string(),
                "declared check model::m did not run".to_string(),
                "contract::x failed but is not declared".to_string(),
            ]
        );
    }

    // A variant that drops, adds or invents a check against the mirrored package is refused.
    #[test]
    fn suites_must_match_the_mirrored_package_name_for_name() {
        let correct = set(&["contract::a", "contract::b", "model::m", "story::s"]);
        let same = run(&["contract::a", "model::m"], &["contract::b"], &[]);
        assert_eq!(
            same_checks(&same, &correct, "retrykey", ""),
            Vec::<String>::new()
        );

        let drifted = run(&["contract::a", "contract::z", "extra::e"], &[], &[]);
        assert_eq!(
            same_checks(&drifted, &correct, "retrykey", "loom "),
            vec![
                "loom does not run contract::b, which retrykey runs".to_string(),
                "loom runs contract::z, which retrykey does not".to_string(),
                "loom runs a suite extra:: that retrykey does not have".to_string(),
            ]
        );
    }

    // A suite the mirrored package runs once per backend module is the same suite.
    #[test]
    fn a_suite_inside_a_backend_module_is_the_same_suite() {
        let correct = set(&[
            "contract_sqlite::contract::a",
            "contract_pg::contract::a",
            "crash_sqlite::crash::after_effect",
            "retention::zero_window",
        ]);
        let variant = run(&["contract::a"], &["crash::after_effect"], &[]);
        assert_eq!(
            same_checks(&variant, &correct, "retrykey-durable", ""),
            Vec::<String>::new()
        );
        let short = run(&[], &["crash::after_effect"], &[]);
        assert_eq!(
            same_checks(
                &run(&["contract::b"], &[], &[]),
                &correct,
                "retrykey-durable",
                ""
            ),
            vec![
                "does not run contract::a, which retrykey-durable runs".to_string(),
                "runs contract::b, which retrykey-durable does not".to_string(),
            ]
        );
        assert!(same_checks(&short, &correct, "retrykey-durable", "").is_empty());
    }
}
