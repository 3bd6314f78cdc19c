//! Runs one package's real `cargo test` and reads what it reported.

use std::process::Command;

use crate::test_output::TestRun;
use crate::workspace_root;

/// Arguments of a loom run: the package's one test program, which under `--cfg loom` holds only
/// the loom models. The dev profile, not release: the models are small (about a second to
/// explore in debug), while a release build of loom and its dependencies took 66 s against 24 s.
pub const LOOM_ARGS: &[&str] = &["--test", "it"];

/// Environment of a loom run. `--cfg loom` reaches every crate of the build and tokio does not
/// compile under it, so loom builds only std-only packages, in a target directory of its own.
pub const LOOM_ENV: &[(&str, &str)] = &[
    ("RUSTFLAGS", "--cfg loom"),
    ("CARGO_TARGET_DIR", "target/loom"),
];

/// Runs `cargo test -p <package> --no-fail-fast` from the workspace root, with extra arguments
/// and environment, and reads its output. A run that failed without a failing test or a
/// diagnostic still says how it ended.
pub fn cargo_test(package: &str, args: &[&str], env: &[(&str, &str)]) -> std::io::Result<TestRun> {
    let turn = crate::cargo_turn();
    let output = Command::new(cargo())
        .current_dir(workspace_root())
        .args(["test", "-p", package, "--no-fail-fast", "--color", "never"])
        .args(args)
        // One line per test is what gets parsed, whatever the caller's cargo settings.
        .env("CARGO_TERM_QUIET", "false")
        // A failing variant must read the same on every machine: no backtrace in its output.
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .envs(env.iter().copied())
        .output()?;
    drop(turn);
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    let mut run = TestRun::parse(&text);
    if !output.status.success() && run.failed.is_empty() && run.diagnostics.is_empty() {
        run.diagnostics
            .push(format!("cargo test exited with {}", output.status));
    }
    Ok(run)
}

/// Runs a package's loom models (`tests/it/main.rs` under `--cfg loom`).
pub fn loom_test(package: &str) -> std::io::Result<TestRun> {
    cargo_test(package, LOOM_ARGS, LOOM_ENV)
}

/// The names of the checks a package's test targets hold, without running them
/// (`cargo test --tests -- --list`); with `loom`, the names of its loom models.
pub fn listed(package: &str, loom: bool) -> std::io::Result<TestRun> {
    if loom {
        let mut args = LOOM_ARGS.to_vec();
        args.extend(["--", "--list"]);
        cargo_test(package, &args, LOOM_ENV)
    } else {
        cargo_test(package, &["--tests", "--", "--list"], &[])
    }
}

/// The cargo that runs this program (set by cargo for build scripts, tests and `cargo run`),
/// or the one on PATH.
pub fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string())
}
