//! Mutation testing: how many deliberate small changes to the code the tests notice.
//!
//! `cargo mutants` changes one operator, match arm or return value at a time and runs the
//! package's tests. A change no test notices ("missed") is either harmless (an equivalent
//! mutant) or a gap in the tests. Each scope has a goal for the share caught, and every missed
//! mutant must be listed, with its reason, in the book's mutation appendix: a new survivor, or a
//! listed one that is now caught, fails the run, so the appendix stays true.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Deserialize;

use crate::{Error, read};

/// The book page that lists every surviving mutant and why it may survive.
pub const APPENDIX: &str = "docs/src/appendix-mutants.md";

/// A part of the workspace under mutation testing, with its goal.
#[derive(Clone, Copy, Debug)]
pub struct Scope {
    /// The name given on the command line.
    pub name: &'static str,
    /// What the scope covers, for the report.
    pub title: &'static str,
    /// The package whose tests judge the mutants.
    pub package: &'static str,
    /// The files mutated; empty for the whole package.
    pub files: &'static [&'static str],
    /// The least share of viable mutants the tests must catch, in percent.
    pub goal_percent: u32,
}

/// Every scope: the core crate (in `just ci`), then the slower ones (`just mutants-slow`).
pub const SCOPES: &[Scope] = &[
    Scope {
        name: "core",
        title: "core crate (retrykey)",
        package: "retrykey",
        files: &[],
        goal_percent: 95,
    },
    Scope {
        name: "http",
        title: "HTTP engine and memory store",
        package: "retrykey-http",
        files: &[
            "crates/retrykey-http/src/engine.rs",
            "crates/retrykey-http/src/memory.rs",
        ],
        goal_percent: 85,
    },
    Scope {
        name: "client",
        title: "client executor, policy and budget",
        package: "retrykey-client",
        files: &[
            "crates/retrykey-client/src/executor.rs",
            "crates/retrykey-client/src/policy.rs",
            "crates/retrykey-client/src/budget.rs",
        ],
        goal_percent: 85,
    },
];

/// The scope called `name`.
pub fn scope(name: &str) -> Option<Scope> {
    SCOPES.iter().copied().find(|scope| scope.name == name)
}

/// What one `cargo mutants` run found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Mutants some test failed on.
    pub caught: usize,
    /// Mutants that made the tests hang past the timeout: noticed, so counted as caught.
    pub timeout: usize,
    /// Mutants that did not compile: not counted.
    pub unviable: usize,
    /// Mutants no test noticed, named without line and column (`file: description`), so that
    /// the appendix does not go stale when a line moves.
    pub missed: BTreeSet<String>,
}

impl Tally {
    /// Mutants that compiled.
    pub fn viable(&self) -> usize {
        self.caught + self.timeout + self.missed.len()
    }

    /// Caught (timeouts included) per thousand viable mutants; a scope with none is complete.
    pub fn caught_per_mille(&self) -> usize {
        match self.viable() {
            0 => 1000,
            viable => (self.caught + self.timeout) * 1000 / viable,
        }
    }
}

#[derive(Deserialize)]
struct Outcomes {
    outcomes: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    scenario: serde_json::Value,
    summary: String,
}

/// Reads `outcomes.json` from a `cargo mutants` output folder.
pub fn tally(outcomes_json: &str) -> Result<Tally, String> {
    let outcomes: Outcomes =
        serde_json::from_str(outcomes_json).map_err(|error| error.to_string())?;
    let mut tally = Tally::default();
    for outcome in outcomes.outcomes {
        let Some(name) = outcome.scenario["Mutant"]["name"].as_str() else {
            // The baseline (the unmutated tree) is not a mutant.
            if outcome.summary != "Success" {
                return Err(format!("the unmutated tree fails: {}", outcome.summary));
            }
            continue;
        };
        match outcome.summary.as_str() {
            "CaughtMutant" => tally.caught += 1,
            "Timeout" => tally.timeout += 1,
            "Unviable" => tally.unviable += 1,
            "MissedMutant" => {
                tally.missed.insert(without_position(name));
            }
            other => return Err(format!("{name}: unexpected outcome {other}")),
        }
    }
    Ok(tally)
}

/// `crates/x/src/a.rs:12:5: replace ...` → `crates/x/src/a.rs: replace ...`.
pub fn without_position(name: &str) -> String {
    let mut parts = name.splitn(4, ':');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(file), Some(line), Some(column), Some(rest))
            if line.parse::<u32>().is_ok() && column.parse::<u32>().is_ok() =>
        {
            format!("{file}:{rest}")
        }
        _ => name.to_string(),
    }
}

/// The surviving mutants the appendix lists: every list item whose text starts with a
/// backticked `file: description`.
pub fn documented(appendix: &str) -> BTreeSet<String> {
    appendix
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("- `"))
        .filter_map(|rest| rest.split_once('`').map(|(name, _)| name.to_string()))
        .filter(|name| name.contains(".rs: "))
        .collect()
}

/// The appendix's entries that belong to `scope`'s files.
pub fn documented_in(scope: &Scope, appendix: &str) -> BTreeSet<String> {
    documented(appendix)
        .into_iter()
        .filter(|name| in_scope(scope, name))
        .collect()
}

fn in_scope(scope: &Scope, name: &str) -> bool {
    let file = name.split(':').next().unwrap_or_default();
    if scope.files.is_empty() {
        file.starts_with(&format!("crates/{}/", scope.package))
    } else {
        scope.files.contains(&file)
    }
}

/// The verdict on one run: what is wrong with it (nothing, for a run that meets its goal and
/// matches the appendix).
pub fn problems(scope: &Scope, tally: &Tally, documented: &BTreeSet<String>) -> Vec<String> {
    let mut problems = Vec::new();
    if tally.caught_per_mille() < scope.goal_percent as usize * 10 {
        problems.push(format!(
            "{}: {} caught, below the goal of {}%",
            scope.title,
            percent(tally),
            scope.goal_percent
        ));
    }
    for name in tally.missed.difference(documented) {
        problems.push(format!(
            "survived, not in {APPENDIX}: {name} (add a test that catches it, or list it with the reason it is harmless)"
        ));
    }
    for name in documented.difference(&tally.missed) {
        problems.push(format!(
            "listed in {APPENDIX} but no longer survives: {name} (remove it from the list)"
        ));
    }
    problems
}

/// `97.2%` of viable mutants caught.
pub fn percent(tally: &Tally) -> String {
    let per_mille = tally.caught_per_mille();
    format!("{}.{}%", per_mille / 10, per_mille % 10)
}

/// Reads the appendix from the workspace root.
pub fn read_appendix(root: &Path) -> Result<String, Error> {
    read(root.join(APPENDIX))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CORE: Scope = SCOPES[0];

    fn outcomes(entries: &[(&str, &str)]) -> String {
        let mut outcomes = vec![r#"{"scenario":"Baseline","summary":"Success"}"#.to_string()];
        for (name, summary) in entries {
            outcomes.push(format!(
                r#"{{"scenario":{{"Mutant":{{"name":"{name}"}}}},"summary":"{summary}"}}"#
            ));
        }
        format!(r#"{{"outcomes":[{}]}}"#, outcomes.join(","))
    }

    #[test]
    fn counts_each_outcome_and_names_survivors_without_their_position() {
        let json = outcomes(&[
            ("crates/retrykey/src/a.rs:1:2: replace x", "CaughtMutant"),
            ("crates/retrykey/src/a.rs:3:4: replace y", "MissedMutant"),
            ("crates/retrykey/src/a.rs:5:6: replace z", "Unviable"),
            ("crates/retrykey/src/a.rs:7:8: replace w", "Timeout"),
        ]);
        let tally = tally(&json).expect("valid outcomes");
        assert_eq!((tally.caught, tally.timeout, tally.unviable), (1, 1, 1));
        assert_eq!(tally.viable(), 3);
        assert_eq!(
            tally.missed,
            BTreeSet::from(["crates/retrykey/src/a.rs: replace y".to_string()])
        );
        assert_eq!(percent(&tally), "66.6%");
    }

    #[test]
    fn a_failing_baseline_is_an_error_not_a_result() {
        let json = r#"{"outcomes":[{"scenario":"Baseline","summary":"Failure"}]}"#;
        assert!(tally(json).is_err());
    }

    #[test]
    fn survivors_must_match_the_appendix_both_ways() {
        let appendix = "\
## Core
- `crates/retrykey/src/a.rs: replace y`: equivalent, because ...
- `crates/retrykey-http/src/engine.rs: replace q`: another scope
- a line that is not an entry
";
        let documented = documented_in(&CORE, appendix);
        assert_eq!(
            documented,
            BTreeSet::from(["crates/retrykey/src/a.rs: replace y".to_string()])
        );

        let mut tally = Tally {
            caught: 99,
            ..Tally::default()
        };
        tally
            .missed
            .insert("crates/retrykey/src/a.rs: replace y".into());
        assert_eq!(problems(&CORE, &tally, &documented), Vec::<String>::new());

        // A new survivor fails the run, and so does a listed one that is now caught.
        tally
            .missed
            .insert("crates/retrykey/src/b.rs: replace v".into());
        tally.missed.remove("crates/retrykey/src/a.rs: replace y");
        let problems = problems(&CORE, &tally, &documented);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("b.rs: replace v"));
        assert!(problems[1].contains("no longer survives"));
    }

    #[test]
    fn a_share_below_the_goal_fails() {
        let mut tally = Tally {
            caught: 94,
            ..Tally::default()
        };
        for n in 0..6 {
            tally
                .missed
                .insert(format!("crates/retrykey/src/a.rs: m{n}"));
        }
        let documented = tally.missed.clone();
        let problems = problems(&CORE, &tally, &documented);
        assert_eq!(problems.len(), 1);
        assert!(problems[0].contains("94.0% caught, below the goal of 95%"));
    }
}
