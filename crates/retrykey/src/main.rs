//! `cargo run -p retrykey`: the lost-reply story, told by a real in-memory ledger.
//!
//! Every flag changes one input of the story, so a class can predict, run, and compare. The
//! output is the same on every run.

mod story;

use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use retrykey::{DEFAULT_MAX_RECORDS, DEFAULT_MAX_UNITS, Key, Limits, Request};

/// A client sends work, the reply is lost, and the client retries. What does the store do?
#[derive(Parser, Debug)]
#[command(name = "retrykey", version, about)]
struct Args {
    /// Operation key of the first attempt.
    #[arg(long, default_value = "op-1")]
    key: String,
    /// Job name of the first attempt.
    #[arg(long, default_value = "convert-document")]
    job: String,
    /// Units the first attempt reserves (a positive whole number).
    #[arg(long, default_value = "7", allow_hyphen_values = true)]
    units: String,
    /// Operation key of the retry (default: the first attempt's key).
    #[arg(long)]
    retry_key: Option<String>,
    /// Job name of the retry (default: the first attempt's job).
    #[arg(long)]
    retry_job: Option<String>,
    /// Units of the retry (default: the first attempt's units).
    #[arg(long, allow_hyphen_values = true)]
    retry_units: Option<String>,
    /// Records the store may hold.
    #[arg(long, default_value_t = DEFAULT_MAX_RECORDS)]
    max_records: usize,
    /// Units the store may commit in total.
    #[arg(long, default_value_t = DEFAULT_MAX_UNITS)]
    max_units: u64,
}

/// Bad input ends the program with one line saying what was wrong, and exit status 2.
fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Args) -> anyhow::Result<()> {
    let first = story::Call {
        key: Key::new(&*args.key).context("--key")?,
        request: Request::parse(&*args.job, &args.units).context("--job/--units")?,
    };
    let retry = story::Call {
        key: Key::new(args.retry_key.unwrap_or(args.key)).context("--retry-key")?,
        request: Request::parse(
            args.retry_job.unwrap_or(args.job),
            args.retry_units.as_deref().unwrap_or(&args.units),
        )
        .context("--retry-job/--retry-units")?,
    };
    let limits = Limits {
        max_records: args.max_records,
        max_units: args.max_units,
    };
    story::tell(&first, &retry, limits, &mut std::io::stdout().lock())?;
    Ok(())
}
