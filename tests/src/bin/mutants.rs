//! `just mutants` and `just mutants-slow`: run cargo-mutants on a scope, then hold the result to
//! the scope's goal and to the book's list of surviving mutants.
//!
//! Its scopes and flags are in `HELP` (`just mutants --help`).

use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};
use retrykey_tests::mutation::{self, APPENDIX, SCOPES, Scope};
use retrykey_tests::workspace_root;

const HELP: &str = "\
usage: mutants SCOPE... [-- CARGO_MUTANTS_ARGS...]

Runs cargo-mutants on each scope, then holds the result to the scope's goal
and to the list of surviving mutants in APPENDIX.
Exits 0 only when every scope meets its goal and its survivors are exactly
the listed ones.

Scopes:
SCOPES

  --          give the arguments after it to cargo mutants (e.g. --in-place)
  -h, --help  print this help
";

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("mutants: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<bool> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (names, extra) = match args.iter().position(|arg| arg == "--") {
        Some(at) => (&args[..at], &args[at + 1..]),
        None => (&args[..], &[][..]),
    };
    if names.iter().any(|arg| arg == "-h" || arg == "--help") {
        let scopes: Vec<String> = SCOPES
            .iter()
            .map(|scope| {
                format!(
                    "  {:<10}  the {}: at least {}% caught",
                    scope.name, scope.title, scope.goal_percent
                )
            })
            .collect();
        print!(
            "{}",
            HELP.replace("APPENDIX", APPENDIX)
                .replace("SCOPES", &scopes.join("\n"))
        );
        return Ok(true);
    }
    if names.is_empty() {
        let known: Vec<&str> = SCOPES.iter().map(|scope| scope.name).collect();
        bail!(
            "usage: mutants SCOPE... [-- ARGS]; scopes: {}",
            known.join(", ")
        );
    }
    let scopes = names
        .iter()
        .map(|name| mutation::scope(name).with_context(|| format!("no scope named {name}")))
        .collect::<Result<Vec<Scope>>>()?;
    let installed = Command::new("cargo")
        .args(["mutants", "--version"])
        .output();
    if !installed.is_ok_and(|output| output.status.success()) {
        bail!("cargo-mutants is missing: cargo install cargo-mutants --locked");
    }

    let root = workspace_root();
    let appendix = mutation::read_appendix(&root)?;
    let mut all_good = true;
    for scope in scopes {
        let output = root.join("target/mutants").join(scope.name);
        std::fs::create_dir_all(&output)
            .with_context(|| format!("cannot create {}", output.display()))?;
        let mut command = Command::new("cargo");
        command
            .current_dir(&root)
            .env_remove("RUST_BACKTRACE")
            // Every mutant rebuilds the crate it changes and all that depend on it; incremental
            // compilation (off in CI builds) makes each rebuild about a fifth quicker.
            .env("CARGO_INCREMENTAL", "1")
            .args(["mutants", "--no-shuffle", "--package", scope.package])
            .arg("--output")
            .arg(&output);
        for file in scope.files {
            command.args(["--file", file]);
        }
        // The mutants are built in a scratch copy, so an interrupted run never leaves a mutated
        // file in your tree, and a build or test running meanwhile (CI runs the tests beside
        // this) never sees one. In a clone you will throw away, `-- --in-place` reuses its build.
        command.args(extra);
        println!("mutating the {} ...", scope.title);
        let status = command.status().context("cannot run cargo mutants")?;
        // 0: all caught; 2: some missed; 3: some timed out. Anything else is not a result.
        if !matches!(status.code(), Some(0 | 2 | 3)) {
            bail!("cargo mutants failed for {} ({status})", scope.title);
        }
        let outcomes = output.join("mutants.out/outcomes.json");
        let json = std::fs::read_to_string(&outcomes)
            .with_context(|| format!("cannot read {}", outcomes.display()))?;
        let tally = mutation::tally(&json).map_err(anyhow::Error::msg)?;
        let documented = mutation::documented_in(&scope, &appendix);
        let problems = mutation::problems(&scope, &tally, &documented);
        println!(
            "{}: {} of {} viable mutants caught ({}; goal {}%), {} unviable, {} missed: {}",
            scope.title,
            tally.caught + tally.timeout,
            tally.viable(),
            mutation::percent(&tally),
            scope.goal_percent,
            tally.unviable,
            tally.missed.len(),
            if problems.is_empty() {
                format!("ok, as {APPENDIX} lists")
            } else {
                "FAILED".to_string()
            },
        );
        for problem in &problems {
            println!("    {problem}");
        }
        all_good &= problems.is_empty();
    }
    Ok(all_good)
}
