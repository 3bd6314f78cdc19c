//! What a run of the kit found, as a table with a witness under each failure, or as JSON.

use std::fmt::Write;

use serde::Serialize;

use crate::checks::KitCheck;
use crate::witness::WitnessLine;

/// Every check's verdict against one server.
#[derive(Debug, Clone, Serialize)]
pub struct KitReport {
    /// The server's base URL.
    pub base: String,
    /// One per check run or skipped, in the kit's order.
    pub checks: Vec<CheckReport>,
}

/// One check's verdict.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    /// The check's name.
    pub name: &'static str,
    /// Where its rule comes from: a section of the draft, or the lab.
    pub source: String,
    /// Passed, failed or skipped (in JSON: `"verdict"`, beside the failure's or skip's fields).
    #[serde(flatten)]
    pub verdict: CheckVerdict,
    /// How long it took, shrinking included, in milliseconds.
    pub ms: u64,
}

/// Passed, failed (with a witness) or skipped (with why).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "kebab-case", tag = "verdict")]
pub enum CheckVerdict {
    /// Every expectation and every shared rule held.
    Passed,
    /// Something broke.
    Failed(FailedCheck),
    /// The profile does not give what the check needs: never counted as a pass.
    Skipped {
        /// What the profile lacks.
        reason: String,
    },
}

/// A failed check: what broke, in the smallest run that broke it.
#[derive(Debug, Clone, Serialize)]
pub struct FailedCheck {
    /// What broke: the check's own finding and any shared rule, one sentence each.
    pub breaches: Vec<String>,
    /// The size of the run the witness comes from, for a check that has one.
    pub size: Option<usize>,
    /// The size the check first ran at.
    pub first_size: Option<usize>,
    /// How many exchanges that run made.
    pub exchanges: usize,
    /// How many of them the breaches name: more than the witness shows when over [`crate::MAX_WITNESS`].
    pub named: usize,
    /// The exchanges that show it.
    pub witness: Vec<WitnessLine>,
}

/// How the reason of a check that could not be judged here begins.
pub const NOT_JUDGED: &str = "not judged: ";

impl CheckReport {
    /// The report of `check` where it cannot be judged (a hook of the profile does nothing on
    /// this server, or a check it stands on failed): skipped, and `why`.
    pub fn not_judged(check: &KitCheck, why: &str) -> Self {
        Self {
            name: check.name,
            source: check.source.to_string(),
            verdict: CheckVerdict::Skipped {
                reason: format!("{NOT_JUDGED}{why}"),
            },
            ms: 0,
        }
    }
}

impl KitReport {
    /// The names of the checks that failed.
    pub fn failed(&self) -> Vec<&'static str> {
        self.with(|verdict| matches!(verdict, CheckVerdict::Failed(_)))
    }

    /// The names of the checks that were skipped.
    pub fn skipped(&self) -> Vec<&'static str> {
        self.with(|verdict| matches!(verdict, CheckVerdict::Skipped { .. }))
    }

    /// The names of the checks that passed.
    pub fn passed(&self) -> Vec<&'static str> {
        self.with(|verdict| matches!(verdict, CheckVerdict::Passed))
    }

    fn with(&self, keep: impl Fn(&CheckVerdict) -> bool) -> Vec<&'static str> {
        self.checks
            .iter()
            .filter(|check| keep(&check.verdict))
            .map(|check| check.name)
            .collect()
    }

    /// The report as JSON: the base, the three counts, and every check with its verdict.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "base": self.base,
            "passed": self.passed().len(),
            "failed": self.failed().len(),
            "skipped": self.skipped().len(),
            "checks": self.checks,
        })
    }

    /// The table, each failure's witness, and the count.
    pub fn text(&self) -> String {
        let mut out = format!(
            "{:<38} {:<7} {:<11} {:>7}\n",
            "check", "verdict", "rule", "time"
        );
        for check in &self.checks {
            let verdict = match &check.verdict {
                CheckVerdict::Passed => "pass",
                CheckVerdict::Failed(_) => "FAIL",
                CheckVerdict::Skipped { .. } => "skip",
            };
            let time = format!("{} ms", check.ms);
            let _ = writeln!(
                out,
                "{:<38} {verdict:<7} {:<11} {time:>7}",
                check.name, check.source
            );
        }
        for check in &self.checks {
            if let CheckVerdict::Failed(failure) = &check.verdict {
                out.push_str(&failure_text(check.name, failure));
            }
        }
        for check in &self.checks {
            if let CheckVerdict::Skipped { reason: why } = &check.verdict {
                let _ = writeln!(out, "\n{} skipped: {why}", check.name);
            }
        }
        let _ = writeln!(
            out,
            "\n{} passed, {} failed, {} skipped",
            self.passed().len(),
            self.failed().len(),
            self.skipped().len()
        );
        out
    }
}

fn failure_text(name: &str, failure: &FailedCheck) -> String {
    let mut out = format!("\n{name} failed:\n");
    for breach in &failure.breaches {
        let _ = writeln!(out, "  {breach}");
    }
    let run = match (failure.size, failure.first_size) {
        (Some(size), Some(first)) if size < first => {
            format!("a run of size {size}, shrunk from {first}")
        }
        (Some(size), _) => format!("a run of size {size}"),
        _ => "the run".to_owned(),
    };
    let cut = if failure.named > failure.witness.len() {
        format!(
            " (the first {} of {} named)",
            failure.witness.len(),
            failure.named
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "  witness: {} of the {} exchanges of {run}{cut}",
        failure.witness.len(),
        failure.exchanges
    );
    out.push_str(&witness_text(&failure.witness));
    out
}

/// Witness lines as the reports print them: what was sent, and under it what came back.
pub(crate) fn witness_text(witness: &[WitnessLine]) -> String {
    let mut out = String::new();
    for line in witness {
        let _ = writeln!(out, "  {:>3} > {}", line.number, line.sent);
        let _ = writeln!(out, "      < {}", line.got);
    }
    out
}
