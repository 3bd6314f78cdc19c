//! Reads what `cargo test` printed: which tests ran, which failed, and whether it compiled cleanly.

use std::collections::{BTreeMap, BTreeSet};

/// What one `cargo test` run reported.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TestRun {
    /// Every test that reported a result.
    pub ran: BTreeSet<String>,
    /// The tests that failed.
    pub failed: BTreeSet<String>,
    /// The tests the harness skipped (`#[ignore]`, for example a check that needs PostgreSQL).
    pub ignored: BTreeSet<String>,
    /// Why the harness skipped each ignored test that carries a reason
    /// (`#[ignore = "needs PostgreSQL: ..."]`).
    pub ignored_because: BTreeMap<String, String>,
    /// The tests a `-- --list` run named without running them.
    pub listed: BTreeSet<String>,
    /// Compiler warnings and errors, one line each.
    pub diagnostics: Vec<String>,
}

impl TestRun {
    /// Reads the combined stdout and stderr of `cargo test --no-fail-fast`.
    pub fn parse(output: &str) -> Self {
        let mut run = Self::default();
        for line in output.lines() {
            if let Some(rest) = line.strip_prefix("test ") {
                if let Some((name, result)) = rest.rsplit_once(" ... ") {
                    let name = name.trim().to_string();
                    match result.trim() {
                        "ok" => {
                            run.ran.insert(name);
                        }
                        "FAILED" => {
                            run.ran.insert(name.clone());
                            run.failed.insert(name);
                        }
                        result if result.starts_with("ignored") => {
                            if let Some(reason) = result.strip_prefix("ignored, ") {
                                run.ignored_because
                                    .insert(name.clone(), reason.trim().to_string());
                            }
                            run.ignored.insert(name);
                        }
                        _ => {}
                    }
                }
            } else if let Some(name) = line.strip_suffix(": test") {
                run.listed.insert(name.to_string());
            } else if line.starts_with("warning:") || line.starts_with("error") {
                let is_test_summary = line.starts_with("error: test failed")
                    || line.starts_with("error: 1 target failed")
                    || line.contains("targets failed");
                if !is_test_summary {
                    run.diagnostics.push(line.to_string());
                }
            }
        }
        run
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Passing, failing and ignored tests (with the reason, if any) are told apart, and test-failure summaries are not diagnostics.
    #[test]
    fn reads_results_and_diagnostics() {
        let output = "\
warning: unused variable: `x`
test contract::a ... ok
test contract::b ... FAILED
test connections::c ... ignored, needs PostgreSQL
test contract::e ... ignored
contract::d: test
test src/lib.rs - doc (line 3) ... ok
error: test failed, to rerun pass `-p v --test it`
error: 1 target failed:
";
        let run = TestRun::parse(output);
        assert_eq!(run.failed, BTreeSet::from(["contract::b".to_string()]));
        assert_eq!(run.ran.len(), 3);
        assert_eq!(
            run.ignored,
            BTreeSet::from(["connections::c".to_string(), "contract::e".to_string()])
        );
        assert_eq!(
            run.ignored_because,
            BTreeMap::from([("connections::c".to_string(), "needs PostgreSQL".to_string())])
        );
        assert_eq!(run.listed, BTreeSet::from(["contract::d".to_string()]));
        assert_eq!(
            run.diagnostics,
            vec!["warning: unused variable: `x`".to_string()]
        );
    }
}
