//! The kit's program: every check against one server, a table, a witness under each failure.
//!
//! Exit status 0 when every check that ran passed (and, with `--require-all`, none was
//! skipped); 1 when one failed; 2 for a flag or profile it refuses, before any request is sent;
//! 3 when nothing answers at the base URL, so nothing could be tested.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use retrykey_conform::{Base, CHECKS, EXAMPLE_PROFILE, KitError, PAYMENTS_PROFILE, Profile};

/// Check an Idempotency-Key server against the draft's rules and the lab's, over HTTP.
#[derive(Debug, Parser)]
#[command(name = "conform")]
struct Args {
    /// The server's base URL (http://HOST:PORT[/PREFIX]); default: the profile's `base`.
    #[arg(long, value_name = "URL")]
    base: Option<String>,
    /// The profile that describes the server (TOML); default: the lab's payments profile.
    #[arg(long, value_name = "FILE")]
    profile: Option<PathBuf>,
    /// Run only this check (repeat for more).
    #[arg(long = "check", value_name = "NAME")]
    checks: Vec<String>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Fail when a check is skipped, too.
    #[arg(long)]
    require_all: bool,
    /// List the checks, with where each rule comes from, and exit.
    #[arg(long)]
    list: bool,
    /// Print a profile to start from, for a server unlike the lab's, and exit.
    #[arg(long)]
    init: bool,
    /// Instead of the checks: N random operations at once, each retried until settled,
    /// through a fault proxy on 127.0.0.1; the history judged, a failure cut down.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    chaos: Option<u32>,
    /// The seed of a chaos run's plan (default: drawn from the clock, and printed).
    #[arg(long, value_name = "SEED")]
    seed: Option<u64>,
}

/// What the report says of a run without `--profile`.
const BUILT_IN: &str = "the lab's payments (built in; --profile FILE describes another server)";

fn main() -> ExitCode {
    let args = match retrykey_program::parse::<Args>("conform") {
        Ok(args) => args,
        Err(exit) => return exit,
    };
    if args.list {
        for check in CHECKS {
            println!("{:<38} {}", check.name, check.source);
        }
        return ExitCode::SUCCESS;
    }
    if args.init {
        print!("{EXAMPLE_PROFILE}");
        return ExitCode::SUCCESS;
    }
    let (profile, base) = match setting_up(&args) {
        Ok(ready) => ready,
        Err(error) => {
            eprintln!("conform: {error}");
            return ExitCode::from(2);
        }
    };
    let mut verdict = ExitCode::SUCCESS;
    let outcome = retrykey_program::run("conform", async {
        verdict = judge(&args, &profile, &base).await?;
        Ok(())
    });
    if outcome == ExitCode::SUCCESS {
        verdict
    } else {
        outcome
    }
}

/// Runs the kit and prints its report: the exit status of the verdict.
async fn judge(args: &Args, profile: &Profile, base: &Base) -> anyhow::Result<ExitCode> {
    if args.profile.is_none()
        && let Some(answered) = retrykey_conform::unlike(profile, base).await
    {
        eprintln!(
            "conform: no --profile, so the lab's payments are assumed, but {answered}: \
             describe this server in a profile (`conform --init` prints one to start from)"
        );
    }
    let named = (args.profile.as_ref()).map_or(BUILT_IN.to_owned(), |p| p.display().to_string());
    if let Some(operations) = args.chaos {
        if !args.json {
            println!("profile: {named}");
        }
        return chaos(args, profile, base, operations as usize).await;
    }
    let report = match retrykey_conform::run(profile, base, &args.checks).await {
        Ok(report) => report,
        Err(error @ KitError::Unreachable { .. }) => {
            if args.json {
                println!("{}", serde_json::json!({ "error": error.to_string() }));
            } else {
                eprintln!("conform: {error}");
            }
            return Ok(ExitCode::from(3));
        }
        Err(error) => return Err(error.into()),
    };
    if args.json {
        let mut json = report.json();
        json["profile"] = serde_json::Value::String(named);
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        println!("profile: {named}");
        print!("{}", report.text());
    }
    let skipped_counts = args.require_all && !report.skipped().is_empty();
    if !report.failed().is_empty() || skipped_counts {
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// A chaos run and its report: the exit status of its verdict.
async fn chaos(
    args: &Args,
    profile: &Profile,
    base: &Base,
    operations: usize,
) -> anyhow::Result<ExitCode> {
    if let Err(why) = retrykey_conform::wire::reachable(base).await {
        eprintln!("conform: nothing answers at {base}: {why}");
        return Ok(ExitCode::from(3));
    }
    let seed = args.seed.unwrap_or_else(|| {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        now.map_or(1, |elapsed| elapsed.as_micros() as u64 % 1_000_000)
    });
    let report = retrykey_conform::chaos(profile, base, operations, seed).await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.text());
    }
    Ok(match report.failure {
        Some(_) => ExitCode::FAILURE,
        None => ExitCode::SUCCESS,
    })
}

/// The profile and the base URL, each checked before anything is sent.
fn setting_up(args: &Args) -> anyhow::Result<(Profile, Base)> {
    let profile = match &args.profile {
        Some(path) => Profile::read(path)?,
        None => Profile::parse(PAYMENTS_PROFILE)?,
    };
    if args.seed.is_some() && args.chaos.is_none() {
        anyhow::bail!("--seed draws a chaos run's plan: give --chaos N as well");
    }
    let Some(base) = args.base.clone().or_else(|| profile.base.clone()) else {
        anyhow::bail!("no --base, and the profile names no base");
    };
    let base: Base = base.parse()?;
    if let Some(unknown) = args
        .checks
        .iter()
        .find(|name| !CHECKS.iter().any(|c| c.name == name.as_str()))
    {
        anyhow::bail!("--check {unknown:?}: the kit has no such check (--list shows them)");
    }
    Ok((profile, base))
}
