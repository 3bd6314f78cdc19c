//! `cargo run -p retrykey`: the lost-reply story, told by a real in-memory ledger.
//!
//! Every flag changes one input of the story, so a class can predict, run, and compare. The
//! output is the same on every run. The flags are read with the standard library alone, so the
//! ledger a service depends on brings no flag parser with it.

mod story;

use std::process::ExitCode;

use retrykey::{DEFAULT_MAX_RECORDS, DEFAULT_MAX_UNITS, Key, Limits, Request};

const HELP: &str = "\
A client sends work, the reply is lost, and the client retries. What does the store do?

usage: retrykey [flags]

  --key KEY            operation key of the first attempt (default: op-1)
  --job NAME           job name of the first attempt (default: convert-document)
  --units N            units the first attempt reserves, a positive whole number (default: 7)
  --retry-key KEY      operation key of the retry (default: the first attempt's key)
  --retry-job NAME     job name of the retry (default: the first attempt's job)
  --retry-units N      units of the retry (default: the first attempt's units)
  --max-records N      records the store may hold
  --max-units N        units the store may commit in total
  -h, --help           print this help
  -V, --version        print the version
";

/// The story's inputs, as given on the command line.
#[derive(Debug)]
struct Args {
    key: String,
    job: String,
    units: String,
    retry_key: Option<String>,
    retry_job: Option<String>,
    retry_units: Option<String>,
    max_records: usize,
    max_units: u64,
}

/// What the command line asks for.
enum Asked {
    Story(Args),
    Help,
    Version,
}

/// Reads `--flag value` and `--flag=value`. A value may start with `-` (`--units -7` reaches the
/// ledger, which refuses it with its own words).
fn parse(mut words: impl Iterator<Item = String>) -> Result<Asked, String> {
    let mut args = Args {
        key: "op-1".to_owned(),
        job: "convert-document".to_owned(),
        units: "7".to_owned(),
        retry_key: None,
        retry_job: None,
        retry_units: None,
        max_records: DEFAULT_MAX_RECORDS,
        max_units: DEFAULT_MAX_UNITS,
    };
    while let Some(word) = words.next() {
        match word.as_str() {
            "-h" | "--help" => return Ok(Asked::Help),
            "-V" | "--version" => return Ok(Asked::Version),
            _ => {}
        }
        let (flag, mut inline) = match word.split_once('=') {
            Some((flag, value)) => (flag.to_owned(), Some(value.to_owned())),
            None => (word, None),
        };
        let mut value = || match inline.take().or_else(|| words.next()) {
            Some(value) => Ok(value),
            None => Err(format!("{flag}: a value is required")),
        };
        match flag.as_str() {
            "--key" => args.key = value()?,
            "--job" => args.job = value()?,
            "--units" => args.units = value()?,
            "--retry-key" => args.retry_key = Some(value()?),
            "--retry-job" => args.retry_job = Some(value()?),
            "--retry-units" => args.retry_units = Some(value()?),
            "--max-records" => args.max_records = whole(&flag, &value()?)?,
            "--max-units" => args.max_units = whole(&flag, &value()?)?,
            _ => {
                return Err(format!(
                    "unexpected argument '{flag}' (--help lists the flags)"
                ));
            }
        }
    }
    Ok(Asked::Story(args))
}

/// A limit: a whole number that fits its type.
fn whole<T: std::str::FromStr>(flag: &str, value: &str) -> Result<T, String> {
    value
        .parse()
        .map_err(|_| format!("{flag}: expected a whole number, got {value:?}"))
}

/// Bad input ends the program with one line saying what was wrong, and exit status 2.
fn main() -> ExitCode {
    let outcome = match parse(std::env::args().skip(1)) {
        Ok(Asked::Help) => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Ok(Asked::Version) => {
            println!("retrykey {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Ok(Asked::Story(args)) => run(args),
        Err(error) => Err(error),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Args) -> Result<(), String> {
    let first = story::Call {
        key: Key::new(&*args.key).map_err(|e| format!("--key: {e}"))?,
        request: Request::parse(&*args.job, &args.units)
            .map_err(|e| format!("--job/--units: {e}"))?,
    };
    let retry = story::Call {
        key: Key::new(args.retry_key.unwrap_or(args.key))
            .map_err(|e| format!("--retry-key: {e}"))?,
        request: Request::parse(
            args.retry_job.unwrap_or(args.job),
            args.retry_units.as_deref().unwrap_or(&args.units),
        )
        .map_err(|e| format!("--retry-job/--retry-units: {e}"))?,
    };
    let limits = Limits {
        max_records: args.max_records,
        max_units: args.max_units,
    };
    story::tell(&first, &retry, limits, &mut std::io::stdout().lock())
        .map_err(|e| format!("writing the story: {e}"))
}
