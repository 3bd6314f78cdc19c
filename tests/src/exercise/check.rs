//! Checking a copy against its declared checks, apart from the code that makes the copy.

use std::collections::BTreeSet;
use std::path::Path;

use super::{ExerciseError, leave_out_later_chapters, read_manifest};
use crate::cargo_test::{LOOM_ARGS, cargo_test};
use crate::declared::{NEEDS_POSTGRES, postgres_configured};
use crate::test_output::TestRun;

/// What `check` found: the declared checks that still fail, and anything else that went wrong.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// The variant the copy came from.
    pub variant: String,
    /// How many checks the variant declares as failing on every run (loom models included).
    pub declared: usize,
    /// Declared checks that ran and failed (loom models marked so).
    pub still_failing: Vec<String>,
    /// Declared checks that did not run at all (a compile error, a renamed test).
    pub not_run: Vec<String>,
    /// Declared checks that could not run here, with the reason.
    pub skipped: Vec<String>,
    /// Checks that failed although no declaration expects them to.
    pub undeclared: Vec<String>,
    /// Compiler errors that kept the suite from running.
    pub errors: Vec<String>,
}

impl Report {
    /// Every declared check ran and passed, and nothing else failed.
    pub fn fixed(&self) -> bool {
        self.still_failing.is_empty()
            && self.not_run.is_empty()
            && self.skipped.is_empty()
            && self.undeclared.is_empty()
            && self.errors.is_empty()
    }

    /// The report as printed: one line per check that keeps the exercise from being fixed.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for error in &self.errors {
            out.push_str(&format!("does not compile: {error}\n"));
        }
        for check in &self.still_failing {
            out.push_str(&format!("still failing: {check}\n"));
        }
        for check in &self.not_run {
            out.push_str(&format!("did not run: {check}\n"));
        }
        for check in &self.skipped {
            out.push_str(&format!("skipped: {check}\n"));
        }
        for check in &self.undeclared {
            out.push_str(&format!("failing, not declared: {check}\n"));
        }
        if self.fixed() {
            out.push_str(&format!(
                "fixed: all {} declared checks pass\n",
                self.declared
            ));
        } else {
            let passing =
                self.declared - self.still_failing.len() - self.not_run.len() - self.skipped.len();
            let skipped = match self.skipped.len() {
                0 => String::new(),
                n => format!(", {n} skipped"),
            };
            out.push_str(&format!(
                "not fixed: {passing} of {} declared checks pass{skipped} (the solution: just diff {})\n",
                self.declared, self.variant
            ));
        }
        out
    }
}

/// Runs the copy in `dir` (a member of the workspace at `workspace`): its suite, and its loom
/// models when the variant declares loom checks. `env` is passed to cargo (a target folder, say).
pub fn check(workspace: &Path, dir: &Path, env: &[(&str, &str)]) -> Result<Report, ExerciseError> {
    let manifest_path = dir.join("Cargo.toml");
    if !manifest_path.is_file() {
        return Err(ExerciseError::Missing(dir.to_path_buf()));
    }
    let (package, mut checks, variant) = read_manifest(&manifest_path)?;
    let variant = variant.ok_or_else(|| ExerciseError::Manifest {
        path: manifest_path.clone(),
        reason: "no [package.metadata.exercise] table: not a copy made by `just exercise`"
            .to_string(),
    })?;
    let later = leave_out_later_chapters(workspace, &variant, &mut checks);
    let root_manifest = workspace.join("Cargo.toml");
    let root_manifest = root_manifest.to_string_lossy();
    let mut report = Report {
        variant,
        declared: checks.must_fail.len() + checks.loom_must_fail.len(),
        ..Report::default()
    };

    if checks.needs_postgres && !postgres_configured() {
        report
            .skipped
            .extend((checks.must_fail.iter()).map(|check| format!("{check} ({NEEDS_POSTGRES})")));
    } else {
        let mut args = vec!["--manifest-path", root_manifest.as_ref(), "--"];
        for prefix in &later {
            args.extend(["--skip", prefix]);
        }
        let run = cargo_test(&package, &args, env).map_err(ExerciseError::Cargo)?;
        compare(&run, &checks.must_fail, &checks.may_fail, "", &mut report);
    }
    if !checks.loom_must_fail.is_empty() {
        let loom_target = workspace.join("target/loom");
        let loom_target = loom_target.to_string_lossy();
        let mut loom_env = vec![
            ("RUSTFLAGS", "--cfg loom"),
            ("CARGO_TARGET_DIR", loom_target.as_ref()),
        ];
        loom_env.extend(env.iter().filter(|(key, _)| *key != "CARGO_TARGET_DIR"));
        let mut args = vec!["--manifest-path", root_manifest.as_ref()];
        args.extend(LOOM_ARGS);
        let run = cargo_test(&package, &args, &loom_env).map_err(ExerciseError::Cargo)?;
        compare(
            &run,
            &checks.loom_must_fail,
            &BTreeSet::new(),
            " (loom model)",
            &mut report,
        );
    }
    Ok(report)
}

/// Adds one run's findings against its declared checks to `report`.
fn compare(
    run: &TestRun,
    declared: &BTreeSet<String>,
    by_chance: &BTreeSet<String>,
    label: &str,
    report: &mut Report,
) {
    report.errors.extend(
        (run.diagnostics.iter())
            .filter(|line| !line.starts_with("warning"))
            .cloned(),
    );
    for check in declared {
        if run.failed.contains(check) {
            report.still_failing.push(format!("{check}{label}"));
        } else if run.ignored.contains(check) {
            report
                .skipped
                .push(format!("{check}{label} (ignored by the harness)"));
        } else if !run.ran.contains(check) {
            report.not_run.push(format!("{check}{label}"));
        }
    }
    for check in run.failed.difference(declared) {
        if by_chance.contains(check) {
            report
                .still_failing
                .push(format!("{check}{label} (caught by chance)"));
        } else {
            report.undeclared.push(format!("{check}{label}"));
        }
    }
}
