//! How a variant's test run compares with what it declares and with the suites it mirrors.
//!
//! A run is its own listing: the harness names every test it was given, as `ok`, `FAILED` or
//! `ignored` (with the reason), so one `cargo test` shows both what ran and what is there. The
//! checks a variant must run come from the mirrored package's list (`cargo test -- --list`),
//! cut down to the suites the variant declares: its manifest keeps a short list of suite names
//! true, never a list of checks.

use std::collections::{BTreeMap, BTreeSet};

use crate::declared::{Declared, suite_of};
use crate::test_output::TestRun;

/// The reason an ignored PostgreSQL check gives (`#[ignore = "needs PostgreSQL: ..."]`): the one
/// ignore that is a skip, and only when no server is configured.
pub const POSTGRES_IGNORE: &str = "needs PostgreSQL";

/// Checks grouped by suite: `contract` to `{contract::a, contract::b}`.
pub type Suites = BTreeMap<String, BTreeSet<String>>;

/// What one run showed against what it had to show.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Findings {
    /// What makes the variant a broken lab, one sentence each.
    pub problems: Vec<String>,
    /// Expected checks the harness ignored because they need PostgreSQL and none is configured:
    /// the variant is then skipped, never passed.
    pub skipped: BTreeSet<String>,
}

/// What one run of a variant's test program must show.
#[derive(Clone, Debug)]
pub struct Expected<'a> {
    /// Every check the run must report, not ignored, suite by suite; no other suite may run.
    pub suites: Suites,
    /// Checks that must fail.
    pub must_fail: &'a BTreeSet<String>,
    /// Checks that must run and may fail.
    pub may_fail: &'a BTreeSet<String>,
    /// The mirrored package, named in the sentences.
    pub package: &'a str,
    /// Whether an ignore "needs PostgreSQL" is a skip here (the variant needs PostgreSQL and
    /// none is configured) rather than a problem.
    pub postgres_skip: bool,
    /// Put before each sentence: `""`, or `"loom "` for the loom run.
    pub label: &'a str,
}

/// The mirrored package's checks by suite. A package may hold a suite once per backend, in a
/// module of its one test program (`contract_sqlite::contract::x`): a check is its last two
/// segments, and a name without a suite (`it_works`) belongs to none.
pub fn mirrored_suites(listed: &BTreeSet<String>) -> Suites {
    let mut suites = Suites::new();
    for name in listed {
        let mut parts = name.rsplitn(3, "::");
        if let (Some(check), Some(suite)) = (parts.next(), parts.next()) {
            suites
                .entry(suite.to_string())
                .or_default()
                .insert(format!("{suite}::{check}"));
        }
    }
    suites
}

/// Judges the plain run of a variant: its declared suites, whole, as the mirrored package
/// `package` runs them (`mirrored`: its listed checks), and its declared failures.
pub fn judge_run(
    run: &TestRun,
    declared: &Declared,
    mirrored: &BTreeSet<String>,
    package: &str,
    postgres_skip: bool,
) -> Findings {
    let mirrored = mirrored_suites(mirrored);
    let mut missing = Vec::new();
    let mut suites = Suites::new();
    for suite in &declared.suites {
        match mirrored.get(suite) {
            Some(checks) => {
                suites.insert(suite.clone(), checks.clone());
            }
            None => missing.push(format!(
                "declares the suite {suite}::, which {package} does not run"
            )),
        }
    }
    let mut findings = judge(
        run,
        &Expected {
            suites,
            must_fail: &declared.must_fail,
            may_fail: &declared.may_fail,
            package,
            postgres_skip,
            label: "",
        },
    );
    missing.append(&mut findings.problems);
    findings.problems = missing;
    findings
}

/// Judges the loom run of a variant: under `--cfg loom` a test program holds only the loom
/// models, so it must run every model the mirrored package runs (`mirrored`: their names).
pub fn judge_loom_run(
    run: &TestRun,
    declared: &Declared,
    mirrored: &BTreeSet<String>,
    package: &str,
) -> Findings {
    judge(
        run,
        &Expected {
            suites: mirrored_suites(mirrored),
            must_fail: &declared.loom_must_fail,
            may_fail: &BTreeSet::new(),
            package,
            postgres_skip: false,
            label: "loom ",
        },
    )
}

/// Whether one rate run of a may-fail check ran it: a check that is absent or ignored cannot
/// catch the bug, and "caught 0/10" would hide that it is not there.
pub fn rate_run_problem(run: &TestRun, check: &str) -> Option<String> {
    if run.ran.contains(check) {
        return None;
    }
    let why = if run.ignored.contains(check) {
        "was ignored"
    } else {
        "did not run"
    };
    Some(format!("may-fail check {check} {why} in its rate run"))
}

/// The sentences that make a run differ from what it must show; ignored PostgreSQL checks are
/// set aside as skipped when that is allowed.
pub fn judge(run: &TestRun, expected: &Expected<'_>) -> Findings {
    let Expected { package, label, .. } = *expected;
    let mut findings = Findings::default();
    let problems = &mut findings.problems;
    problems.extend(
        (run.diagnostics.iter()).map(|line| format!("{label}does not compile cleanly: {line}")),
    );
    let reported: BTreeSet<&String> = (run.ran.iter())
        .chain(&run.ignored)
        .filter(|name| !is_doc_test(name))
        .collect();

    // Every expected check is there, and runs.
    for (suite, checks) in &expected.suites {
        let absent: Vec<&String> = checks.iter().filter(|c| !reported.contains(c)).collect();
        if !checks.is_empty() && absent.len() == checks.len() {
            problems.push(format!(
                "{label}does not run the suite {suite}:: ({}, which {package} runs)",
                count(checks.len())
            ));
        } else {
            for check in absent {
                problems.push(format!("{label}does not run {check}, which {package} runs"));
            }
        }
        let mut ignored = Vec::new();
        for check in checks.intersection(&run.ignored) {
            let reason = run.ignored_because.get(check);
            if expected.postgres_skip
                && reason.is_some_and(|reason| reason.starts_with(POSTGRES_IGNORE))
            {
                findings.skipped.insert(check.clone());
            } else {
                ignored.push((check, reason));
            }
        }
        let because = |reason: Option<&String>| reason.map_or(String::new(), |r| format!(": {r}"));
        let one_reason = ignored.iter().all(|(_, reason)| *reason == ignored[0].1);
        if !ignored.is_empty() && ignored.len() == checks.len() && one_reason {
            problems.push(format!(
                "{label}ignores the whole suite {suite}:: ({}){}",
                count(checks.len()),
                because(ignored[0].1)
            ));
        } else {
            for (check, reason) in ignored {
                problems.push(format!("{label}ignores {check}{}", because(reason)));
            }
        }
    }

    // Nothing runs beside them.
    let mut others: Suites = Suites::new();
    for name in &reported {
        others
            .entry(suite_of(name).to_string())
            .or_default()
            .insert((*name).clone());
    }
    for (suite, names) in &others {
        match expected.suites.get(suite) {
            None => problems.push(format!(
                "{label}runs a suite {suite}:: ({}) that is not among its suites",
                count(names.len())
            )),
            Some(checks) => {
                for extra in names.difference(checks) {
                    problems.push(format!("{label}runs {extra}, which {package} does not"));
                }
            }
        }
    }

    // The declared failures, and no other.
    let expected_check = |name: &String| {
        (expected.suites.get(suite_of(name))).is_some_and(|checks| checks.contains(name))
    };
    for (checks, kind) in [
        (expected.must_fail, "declared check"),
        (expected.may_fail, "may-fail check"),
    ] {
        for check in checks {
            if run.ran.contains(check) || expected_check(check) {
                // It ran, or its absence is named above.
            } else if run.ignored.contains(check) {
                problems.push(format!("{label}{kind} {check} was skipped"));
            } else {
                problems.push(format!("{label}{kind} {check} did not run"));
            }
        }
    }
    for check in expected.must_fail {
        if run.ran.contains(check) && !run.failed.contains(check) {
            problems.push(format!("{label}{check} passed but must fail"));
        }
    }
    for check in run.failed.difference(expected.must_fail) {
        if !expected.may_fail.contains(check) {
            problems.push(format!("{label}{check} failed but is not declared"));
        }
    }
    findings
}

/// `1 check`, `16 checks`.
fn count(checks: usize) -> String {
    match checks {
        1 => "1 check".to_string(),
        n => format!("{n} checks"),
    }
}

/// A doc test's name (`src/lib.rs - Store::apply (line 12)`): not a check of any suite.
fn is_doc_test(name: &str) -> bool {
    name.contains(" - ") && name.ends_with(')')
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

    fn expected<'a>(
        suites: &[(&str, &[&str])],
        must_fail: &'a BTreeSet<String>,
        may_fail: &'a BTreeSet<String>,
    ) -> Expected<'a> {
        Expected {
            suites: (suites.iter())
                .map(|(suite, checks)| (suite.to_string(), set(checks)))
                .collect(),
            must_fail,
            may_fail,
            package: "retrykey",
            postgres_skip: false,
            label: "",
        }
    }

    // A run that fails exactly the declared checks (chance-only failures aside) has no problem.
    #[test]
    fn exact_failures_hold() {
        let run = run(&["contract::a"], &["contract::b", "stress::c"], &[]);
        let (must, may) = (set(&["contract::b"]), set(&["stress::c"]));
        let expected = expected(
            &[
                ("contract", &["contract::a", "contract::b"]),
                ("stress", &["stress::c"]),
            ],
            &must,
            &may,
        );
        assert_eq!(judge(&run, &expected), Findings::default());
    }

    // A declared check that passed, was skipped or never ran, and an undeclared failure, are
    // each named.
    #[test]
    fn every_departure_is_named() {
        let run = run(&["contract::a"], &["contract::x"], &["connections::p"]);
        let (must, none) = (
            set(&["contract::a", "connections::p", "model::m"]),
            set(&[]),
        );
        let expected = expected(
            &[("contract", &["contract::a", "contract::x"])],
            &must,
            &none,
        );
        assert_eq!(
            judge(&run, &expected).problems,
            vec![
                "runs a suite connections:: (1 check) that is not among its suites".to_string(),
                "declared check connections::p was skipped".to_string(),
                "declared check model::m did not run".to_string(),
                "contract::a passed but must fail".to_string(),
                "contract::x failed but is not declared".to_string(),
            ]
        );
    }

    // A variant that drops, adds or invents a check against the mirrored package is refused.
    #[test]
    fn suites_must_match_the_mirrored_package_name_for_name() {
        let none = BTreeSet::new();
        let expected = expected(
            &[
                ("contract", &["contract::a", "contract::b"]),
                ("model", &["model::m"]),
            ],
            &none,
            &none,
        );
        let drifted = run(
            &["contract::a", "contract::z", "model::m", "extra::e"],
            &[],
            &[],
        );
        assert_eq!(
            judge(&drifted, &expected).problems,
            vec![
                "does not run contract::b, which retrykey runs".to_string(),
                "runs contract::z, which retrykey does not".to_string(),
                "runs a suite extra:: (1 check) that is not among its suites".to_string(),
            ]
        );
    }

    // A suite the mirrored package runs once per backend module is the same suite.
    #[test]
    fn a_suite_inside_a_backend_module_is_the_same_suite() {
        let listed = set(&[
            "contract_sqlite::contract::a",
            "contract_pg::contract::a",
            "connections::connections::c",
            "retention::zero_window",
            "it_works",
        ]);
        assert_eq!(
            mirrored_suites(&listed),
            Suites::from([
                ("connections".to_string(), set(&["connections::c"])),
                ("contract".to_string(), set(&["contract::a"])),
                ("retention".to_string(), set(&["retention::zero_window"])),
            ])
        );
    }

    // Doc tests of a variant's library belong to no suite.
    #[test]
    fn doc_tests_are_not_checks() {
        let none = BTreeSet::new();
        let expected = expected(&[("contract", &["contract::a"])], &none, &none);
        let run = run(
            &["contract::a", "src/lib.rs - Store::apply (line 12)"],
            &[],
            &[],
        );
        assert_eq!(judge(&run, &expected), Findings::default());
    }

    // Under loom every model of the mirrored package must run, and exactly the declared ones fail.
    #[test]
    fn the_loom_run_holds_every_mirrored_model() {
        let declared = Declared {
            stage: 1,
            mirrors: "crates/retrykey/src/store.rs".into(),
            suites: set(&["contract"]),
            must_fail: BTreeSet::new(),
            may_fail: BTreeSet::new(),
            loom_must_fail: set(&["loom::same_key"]),
            renames: BTreeMap::new(),
            needs_postgres: false,
            simulate: None,
            conform: None,
        };
        let models = set(&["loom::same_key", "loom::distinct_keys"]);
        let whole = run(&["loom::distinct_keys"], &["loom::same_key"], &[]);
        assert_eq!(
            judge_loom_run(&whole, &declared, &models, "retrykey"),
            Findings::default()
        );
        let short = run(&[], &["loom::same_key"], &["loom::distinct_keys"]);
        assert_eq!(
            judge_loom_run(&short, &declared, &models, "retrykey").problems,
            vec!["loom ignores loom::distinct_keys".to_string()]
        );
        let gone = run(&[], &[], &[]);
        assert_eq!(
            judge_loom_run(&gone, &declared, &models, "retrykey").problems,
            vec!["loom does not run the suite loom:: (2 checks, which retrykey runs)".to_string()]
        );
    }
}
