//! `just test-negatives`: run each negative variant's real test suite and hold it to its word.
//!
//! A variant passes when `cargo test` fails exactly the checks it declares as `must_fail` (checks
//! in `may_fail` are ignored), under loom exactly its `loom_must_fail`, it compiles without a
//! warning, and its `src/lib.rs` stays a small, marked change of the file it mirrors. Anything
//! else is a broken lab, and the command exits non-zero.
//!
//! Usage: `negatives [VARIANT ...] [--loom-only] [--rate-runs N] [--diff VARIANT]`

use std::collections::BTreeSet;
use std::process::Command;

use anyhow::{Context, Result, bail};
use retrykey_tests::diff::{change_problems, diff, render, sources};
use retrykey_tests::test_output::TestRun;
use retrykey_tests::{Declared, variants, workspace_root};

struct Options {
    only: Vec<String>,
    loom_only: bool,
    rate_runs: usize,
    diff: Option<String>,
}

fn options() -> Result<Options> {
    let mut options = Options {
        only: Vec::new(),
        loom_only: false,
        rate_runs: 10,
        diff: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--loom-only" => options.loom_only = true,
            "--rate-runs" => {
                let runs = args.next().context("--rate-runs needs a number")?;
                options.rate_runs = runs.parse().context("--rate-runs needs a whole number")?;
            }
            "--diff" => options.diff = Some(args.next().context("--diff needs a variant")?),
            flag if flag.starts_with('-') => bail!("unknown option {flag}"),
            variant => options.only.push(variant.to_string()),
        }
    }
    Ok(options)
}

fn main() -> Result<()> {
    let options = options()?;
    let mut all = variants()?;
    if let Some(variant) = &options.diff {
        let (_, declared) = all
            .iter()
            .find(|(name, _)| name == variant)
            .with_context(|| format!("no variant named {variant} under labs/"))?;
        let (correct, broken) = sources(variant, declared)?;
        println!("--- {}", declared.mirrors.display());
        println!("+++ labs/{variant}/src/lib.rs");
        print!("{}", render(&diff(&correct, &broken), 3));
        return Ok(());
    }
    if !options.only.is_empty() {
        for name in &options.only {
            if !all.iter().any(|(variant, _)| variant == name) {
                bail!("no variant named {name} under labs/");
            }
        }
        all.retain(|(name, _)| options.only.contains(name));
    }
    if options.loom_only {
        all.retain(|(_, declared)| !declared.loom_must_fail.is_empty());
    }

    let mut rows = Vec::new();
    for (name, declared) in &all {
        eprintln!("checking {name} ...");
        let mut problems = change_problems(name, declared)?;
        let mut did_fail = BTreeSet::new();
        if !options.loom_only {
            let run = cargo_test(name, &[], &[])?;
            problems.extend(compare(&run, &declared.must_fail, &declared.may_fail, ""));
            did_fail.extend(run.failed.difference(&declared.may_fail).cloned());
        }
        if !declared.loom_must_fail.is_empty() {
            let run = cargo_test(
                name,
                &["--release", "--test", "loom"],
                &[
                    ("RUSTFLAGS", "--cfg loom"),
                    ("CARGO_TARGET_DIR", "target/loom"),
                ],
            )?;
            problems.extend(compare(
                &run,
                &declared.loom_must_fail,
                &BTreeSet::new(),
                "loom ",
            ));
            did_fail.extend(run.failed.iter().map(|test| format!("loom {test}")));
        }
        let must = declared.must_fail.len() + declared.loom_must_fail.len();
        let chance = if options.loom_only {
            String::new()
        } else {
            detection_rates(name, declared, options.rate_runs)?
        };
        rows.push((
            name.clone(),
            declared.stage,
            must,
            did_fail.len(),
            problems,
            chance,
        ));
    }

    println!(
        "{:<26} {:>5} {:>9} {:>8}  verdict",
        "variant", "stage", "must fail", "did fail"
    );
    let mut broken = 0;
    for (name, stage, must, did, problems, chance) in &rows {
        let verdict = if problems.is_empty() { "ok" } else { "BROKEN" };
        println!("{name:<26} {stage:>5} {must:>9} {did:>8}  {verdict}");
        for problem in problems {
            println!("    {problem}");
        }
        if !chance.is_empty() {
            println!("    {chance}");
        }
        broken += usize::from(!problems.is_empty());
    }
    if broken > 0 {
        bail!("{broken} of {} variants are broken labs", rows.len());
    }
    println!("all {} variants fail exactly as declared", rows.len());
    Ok(())
}

/// Runs `cargo test -p <name> --no-fail-fast` with extra arguments and environment.
fn cargo_test(name: &str, args: &[&str], env: &[(&str, &str)]) -> Result<TestRun> {
    let output = Command::new(env!("CARGO"))
        .current_dir(workspace_root())
        .args(["test", "-p", name, "--no-fail-fast", "--color", "never"])
        .args(args)
        // One line per test is what gets parsed, whatever the caller's cargo settings.
        .env("CARGO_TERM_QUIET", "false")
        .envs(env.iter().copied())
        .output()
        .context("running cargo test")?;
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    let mut run = TestRun::parse(&text);
    if !output.status.success() && run.failed.is_empty() && run.diagnostics.is_empty() {
        // It failed without a failing test or a diagnostic: say at least how it ended.
        run.diagnostics
            .push(format!("cargo test exited with {}", output.status));
    }
    Ok(run)
}

/// The differences between a run and a declaration, one sentence each.
fn compare(
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
        if !run.ran.contains(test) {
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

/// How often the chance-only checks catch the bug, over `runs` single-round runs.
fn detection_rates(name: &str, declared: &Declared, runs: usize) -> Result<String> {
    let mut rates = Vec::new();
    for test in &declared.may_fail {
        let mut caught = 0;
        for _ in 0..runs {
            let run = cargo_test(name, &["--", "--exact", test], &[("STRESS_ROUNDS", "1")])?;
            caught += usize::from(run.failed.contains(test));
        }
        rates.push(format!("{test}: caught {caught}/{runs} runs"));
    }
    Ok(if rates.is_empty() {
        String::new()
    } else {
        format!("by chance only: {}", rates.join("; "))
    })
}
