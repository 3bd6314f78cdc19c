//! How the lab's programs start and fail: their flags parsed (`--help` printed, a refused value
//! as one line and exit status 2), their async work run on a runtime, and a failure reported as
//! one line and exit status 1. The replicas' `payments` and `spray` and the outbox's programs
//! share it.

use std::future::Future;
use std::process::ExitCode;
use std::time::Duration;

use crate::flags;

/// The program's flags, or the exit it must make now: 0 after `--help` or `--version` (clap
/// printed them), 2 after one line on stderr naming the refused value, as `program: ...`.
pub fn parse<A: clap::Parser>(program: &str) -> Result<A, ExitCode> {
    match A::try_parse() {
        Ok(args) => Ok(args),
        // --help and --version are answers, not mistakes: clap prints them as it likes.
        Err(error) if !error.use_stderr() => {
            let _ = error.print();
            Err(ExitCode::SUCCESS)
        }
        Err(error) => {
            eprintln!("{program}: {}", flags::one_line(&error));
            Err(ExitCode::from(2))
        }
    }
}

/// The environment variable that sets how much a program logs: `error` (the default), `warn`,
/// `info`, `debug` or `trace`.
pub const LOG: &str = "RETRYKEY_LOG";

/// Installs the program's log subscriber: the events of the libraries (one per decision of the
/// layer, the stores' and the client's) on stderr, one line each, without a clock, at the level
/// `RETRYKEY_LOG` names. Errors only by default, so that a program under a flood of refusals
/// writes nothing per request unless asked: `RETRYKEY_LOG=info` shows every decision.
fn log(program: &str) {
    let level = match std::env::var(LOG) {
        Ok(level) => match level.parse() {
            Ok(level) => level,
            Err(_) => {
                eprintln!(
                    "{program}: {LOG}: expected error, warn, info, debug or trace, got {level:?}"
                );
                tracing::Level::ERROR
            }
        },
        Err(_) => tracing::Level::ERROR,
    };
    let _ = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_ansi(false)
        .without_time()
        .with_writer(std::io::stderr)
        .try_init();
}

/// Runs `work` on a new multi-threaded runtime, with the program's log subscriber installed; an
/// error is one line, `program: ...`, and exit status 1.
pub fn run(program: &str, work: impl Future<Output = anyhow::Result<()>>) -> ExitCode {
    log(program);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("{program}: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(work);
    // Tasks still running (a request cut off at the shutdown deadline, say) stop at their next
    // await; a blocking database call gets a moment to return, not forever.
    runtime.shutdown_timeout(Duration::from_secs(1));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{program}: {error:#}");
            ExitCode::FAILURE
        }
    }
}
