//! Runs the crash scenario at every point on every backend, against a real crash-server
//! process, and prints the table. Exits with 1 when any row fails.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Parser;
use retrykey_durable::pg;
use retrykey_durable_checks::crash::Point;
use retrykey_durable_checks::crash::harness::ProcessHarness;
use retrykey_durable_checks::crash::scenario;
use retrykey_durable_checks::crash::server::{Backend, delivery};

/// Crash a ledger process at each point, restart it, retry with the same key, count effects.
#[derive(Parser)]
struct Args {
    /// The variant whose crash server to run (`crash-server-<variant>`, built next to this
    /// program); the correct ledger when absent.
    #[arg(long)]
    variant: Option<String>,
    /// Which backends: sqlite, postgres or all (postgres needs RETRYKEY_PG_URL).
    #[arg(long, default_value = "all")]
    backend: String,
}

fn main() -> anyhow::Result<ExitCode> {
    let args = Args::parse();
    let name = match &args.variant {
        Some(variant) => format!("crash-server-{variant}"),
        None => "crash-server".to_owned(),
    };
    let server = sibling(&name)?;
    let url = pg::url_from_env();
    let backends: &[&str] = match args.backend.as_str() {
        "sqlite" => &["sqlite"],
        "postgres" => &["postgres"],
        "all" => &["sqlite", "postgres"],
        other => bail!("--backend must be sqlite, postgres or all, not {other:?}"),
    };

    println!("ledger: {}", args.variant.as_deref().unwrap_or("correct"));
    println!(
        "{:<14} {:<9} {:>13} {:>13}  {:<20} verdict",
        "point", "backend", "effects/crash", "effects/retry", "retry receipt"
    );
    let (mut failed, mut skipped) = (0, 0);
    for &backend in backends {
        for point in Point::ALL {
            match check_row(&server, backend, point, url.as_deref()) {
                Checked::Passed => {}
                Checked::Failed => failed += 1,
                Checked::Skipped => skipped += 1,
            }
        }
    }
    if failed > 0 {
        println!("{failed} row(s) failed: an effect was lost or applied twice");
        return Ok(ExitCode::FAILURE);
    }
    // A skipped row is not a passed one: say how many were not checked.
    if skipped > 0 {
        println!("{skipped} row(s) skipped, not checked");
    }
    println!(
        "every row that ran: exactly one effect, the right receipt, nothing acknowledged lost"
    );
    Ok(ExitCode::SUCCESS)
}

/// What one row of the table came to.
enum Checked {
    Passed,
    Failed,
    Skipped,
}

/// Runs the scenario at `point` against the crash server `server` on a fresh place of
/// `backend`, and prints the row.
fn check_row(server: &Path, backend: &str, point: Point, url: Option<&str>) -> Checked {
    let place = match (backend, url) {
        ("sqlite", _) => Backend::fresh_sqlite(),
        (_, Some(url)) => Backend::fresh_pg(url),
        (_, None) => {
            println!(
                "{:<14} {:<9} skipped: set {} to enable",
                point.name(),
                backend,
                pg::URL_VAR
            );
            return Checked::Skipped;
        }
    };
    let row = scenario::run(&ProcessHarness::new(server, place), point);
    let receipt = match row.retry {
        Some(receipt) => format!(
            "#{} total {} {}",
            receipt.operation,
            receipt.total,
            delivery(&receipt)
        ),
        None => "-".to_owned(),
    };
    println!(
        "{:<14} {:<9} {:>13} {:>13}  {:<20} {row}",
        point.name(),
        backend,
        row.effects_after_crash,
        row.effects_after_retry,
        receipt
    );
    if row.verdict.is_err() {
        Checked::Failed
    } else {
        Checked::Passed
    }
}

/// The program `name`, next to this one (cargo builds every binary into the same directory).
fn sibling(name: &str) -> anyhow::Result<PathBuf> {
    let me = std::env::current_exe().context("cannot find this program's path")?;
    let path = me.with_file_name(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    if !path.exists() {
        bail!("{name} is not built; build it first (see `just crash-matrix`)");
    }
    Ok(path)
}
