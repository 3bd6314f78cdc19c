//! `pgbench`, PostgreSQL's own benchmark, run on the same server in the same run as the lab's
//! benchmarks: the yardstick their figures are divided by.
//!
//! `pgbench -N` is a short write transaction (update an account, read it back, insert a history
//! row), `pgbench -S` one indexed read. Its tables live in the database's default schema.

use std::process::Command;

use anyhow::{Context, bail};

/// Creates pgbench's tables at scale 1, unless they are there already with a scale; returns the
/// scale.
pub fn prepare(url: &str) -> anyhow::Result<i64> {
    let scale = crate::plain::number(
        url,
        "SELECT CASE WHEN to_regclass('pgbench_branches') IS NULL THEN 0 ELSE 1 END::int8",
    )
    .and_then(|exists| match exists {
        0 => Ok(0),
        _ => crate::plain::number(url, "SELECT count(*) FROM pgbench_branches"),
    });
    match scale.context("cannot read pgbench's tables")? {
        0 => {
            run(&["-i", "-q", "-s", "1", url]).context("pgbench -i")?;
            Ok(1)
        }
        scale => Ok(scale),
    }
}

/// One timed pgbench run: `mode` (`-N`, `-S`) with `clients` clients (one thread each) for
/// `seconds`; its transactions per second, excluding connection set-up.
pub fn tps(url: &str, mode: &str, clients: usize, seconds: u64) -> anyhow::Result<f64> {
    Ok(timed(url, mode, clients, seconds, false)?.tps)
}

/// What one logged pgbench run measured.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Transactions per second, excluding connection set-up.
    pub tps: f64,
    /// Every transaction's latency in milliseconds, sorted (from pgbench's `--log`).
    pub latencies_ms: Vec<f64>,
}

/// The same as [`tps`], with every transaction's latency as well.
pub fn logged(url: &str, mode: &str, clients: usize, seconds: u64) -> anyhow::Result<Measured> {
    timed(url, mode, clients, seconds, true)
}

fn timed(
    url: &str,
    mode: &str,
    clients: usize,
    seconds: u64,
    log: bool,
) -> anyhow::Result<Measured> {
    let dir = std::env::temp_dir().join(format!("retrykey-pgbench-{}", std::process::id()));
    let prefix = dir.join("tx");
    let (clients, seconds, prefix_arg) = (
        clients.to_string(),
        seconds.to_string(),
        format!("--log-prefix={}", prefix.display()),
    );
    let mut args = vec![mode, "-n", "-c", &clients, "-j", &clients, "-T", &seconds];
    if log {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).context("a folder for pgbench's log")?;
        args.extend(["--log", &prefix_arg]);
    }
    args.push(url);
    let out = run(&args)?;
    let tps = out
        .lines()
        .find_map(|line| line.strip_prefix("tps = "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|number| number.parse().ok())
        .context("no tps line in pgbench's output")?;
    let mut latencies_ms = Vec::new();
    if log {
        // One line per transaction: client, transaction, latency in µs, script, epoch, µs.
        for entry in std::fs::read_dir(&dir).context("pgbench's log")?.flatten() {
            let text = std::fs::read_to_string(entry.path()).context("a pgbench log file")?;
            latencies_ms.extend(
                text.lines()
                    .filter_map(|line| line.split_whitespace().nth(2)?.parse::<f64>().ok())
                    .map(|micros| micros / 1_000.0),
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
        latencies_ms.sort_by(f64::total_cmp);
    }
    Ok(Measured { tps, latencies_ms })
}

/// Runs pgbench with `args`; its standard output.
pub fn run(args: &[&str]) -> anyhow::Result<String> {
    let output = Command::new("pgbench")
        .args(args)
        .output()
        .context("cannot run pgbench (install postgresql-contrib or the server package)")?;
    if !output.status.success() {
        bail!(
            "pgbench failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The value at quantile `q` (0.5 for the median) of `sorted`, NaN when it is empty.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let at = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}
