//! `just disk-full [sqlite|ledger]`: keyed requests to `payments --store sqlite:PATH` and to the
//! durable SQLite ledger (behind `crash-server` processes), their files and WAL on a small
//! tmpfs that is filled mid-burst and freed a few seconds later; one table row per store.

use std::path::Path;
use std::process::{Command, ExitCode};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::{Parser, ValueEnum};
use retrykey_faults::burst::{self, BurstPlan, Log, Service};
use retrykey_faults::http::{self, PaymentsReplicas};
use retrykey_faults::lines::LedgerProcesses;
use retrykey_faults::process::{self, sibling};
use retrykey_faults::table::{self, During, FaultRow, Window};
use retrykey_faults::tmpfs::{Tmpfs, can_mount, fill};

/// The whole run's cap: past it every process is killed, the tmpfs unmounted, and the run fails.
const CAP: Duration = Duration::from_secs(120);

/// The tmpfs's size: room for the files and their WAL, small enough to fill in an instant.
const SIZE: &str = "16m";

/// When the disk fills after the burst starts, and how long it stays full.
const FULL_AFTER: Duration = Duration::from_millis(1500);
const FULL_FOR: Duration = Duration::from_secs(4);

/// Fill a small filesystem under the SQLite store's or ledger's file mid-burst, then free it;
/// print the table; exit 1 if any row fails. Skips (exit 0) unless run as root with a tmpfs.
#[derive(Debug, Parser)]
struct Args {
    /// Which store: the payments server's SQLite file, or the durable SQLite ledger (both when
    /// omitted).
    #[arg(value_enum)]
    target: Option<Target>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Target {
    /// `payments --store sqlite:PATH`.
    Sqlite,
    /// The durable `SqliteLedger`, served by `crash-server --sqlite PATH`.
    Ledger,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(args.target) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("disk-full: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(target: Option<Target>) -> anyhow::Result<bool> {
    if let Err(reason) = can_mount() {
        println!("disk-full: skipped ({reason})");
        return Ok(true);
    }
    let payments = sibling("payments")?;
    let crash_server = sibling("crash-server")?;
    process::watchdog("disk-full", CAP);
    let started = Instant::now();
    let tmpfs = Tmpfs::mount(SIZE).map_err(anyhow::Error::msg)?;
    let targets = match target {
        Some(target) => vec![target],
        None => vec![Target::Sqlite, Target::Ledger],
    };
    let mut rows = Vec::new();
    for target in targets {
        rows.push(match target {
            Target::Sqlite => sqlite_store(&payments, tmpfs.path())?,
            Target::Ledger => sqlite_ledger(&crash_server, tmpfs.path())?,
        });
    }
    drop(tmpfs);
    print!("{}", table::render(&rows));
    println!(
        "disk-full: a {SIZE} tmpfs; fault = the time it was kept full; reconnect = from space \
         returned to the first key settled; {} rows in {:.1} s",
        rows.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(rows.iter().all(|row| row.failures().is_empty()))
}

/// The burst's shape: `keys` keys over `clients` clients, each pausing `pace_ms` between two
/// keys, so that the burst lasts past the time the disk is full.
fn plan(prefix: &str, keys: usize, clients: usize, pace_ms: u64) -> BurstPlan {
    BurstPlan {
        keys,
        clients,
        prefix: prefix.to_owned(),
        deadline: Duration::from_secs(10),
        max_attempts: 60,
        pace: Duration::from_millis(pace_ms),
    }
}

/// Runs `plan` against `service`, filling the filesystem of `dir` while it runs.
fn burst_while_full(
    service: &dyn Service,
    plan: &BurstPlan,
    dir: &Path,
) -> anyhow::Result<(Log, Window)> {
    let stop = Instant::now() + Duration::from_secs(40);
    let filler = dir.join("filler");
    let (log, window) = thread::scope(|scope| {
        let clients = scope.spawn(|| burst::run(service, plan, stop));
        thread::sleep(FULL_AFTER);
        let start = Instant::now();
        let filled = fill(&filler);
        thread::sleep(FULL_FOR);
        let _ = std::fs::remove_file(&filler);
        let window = Window {
            start,
            end: Instant::now(),
        };
        let log = clients.join().expect("the burst panicked");
        (log, filled.map(|_| window))
    });
    Ok((log, window?))
}

/// The checks every store gets: the fault reached the burst, replays were served while full.
fn full_checks(row: FaultRow, during: During) -> FaultRow {
    row.check(
        "no request was sent while the disk was full",
        during.sent > 0,
    )
    .check(
        "no request was refused while the disk was full (the fault did not bite)",
        during.retried > 0,
    )
    .check(
        format!(
            "only {} of {} replays of stored keys were served while the disk was full",
            during.replays_served, during.replays_sent
        ),
        during.replays_sent > 0 && during.replays_served == during.replays_sent,
    )
}

/// `PRAGMA integrity_check` of the file at `path`, opened after its writers stopped.
fn integrity(path: &Path) -> anyhow::Result<String> {
    let connection =
        rusqlite::Connection::open(path).with_context(|| format!("open {}", path.display()))?;
    Ok(connection.query_row("PRAGMA integrity_check", [], |row| row.get(0))?)
}

/// The payments server on an SQLite file on the tmpfs.
fn sqlite_store(binary: &Path, dir: &Path) -> anyhow::Result<FaultRow> {
    let path = dir.join("payments.sqlite");
    let mut command = Command::new(binary);
    command
        .arg("--store")
        .arg(format!("sqlite:{}", path.display()))
        .args(["--work-ms", "5", "--lease", "2s"]);
    let mut payments = process::payments(command)?;
    let addr = payments.server.addr().to_owned();
    let service = PaymentsReplicas {
        replicas: vec![addr.clone()],
    };
    let plan = plan("sqlite", 120, 6, 100);
    let (log, window) = burst_while_full(&service, &plan, dir)?;
    let charges = http::charges(&addr, Duration::from_secs(10)).ok();
    let up = payments.server.running() && charges.is_some();
    let pid = payments.server.pid();
    drop(payments);
    let checked = integrity(&path);
    let row = FaultRow::new(
        "payments sqlite, disk full",
        &plan,
        &log,
        charges,
        Some(window),
    )
    .check(format!("the server (pid {pid}) did not stay up"), up)
    .check(format!("integrity_check: {checked:?}"), ok(&checked));
    Ok(full_checks(row, During::of(&log, window)))
}

/// The durable SQLite ledger in `crash-server` processes on one file on the tmpfs, one per
/// client. Its keys stay under the ledger's default `max_records` (64), so capacity never
/// refuses one.
fn sqlite_ledger(binary: &Path, dir: &Path) -> anyhow::Result<FaultRow> {
    let path = dir.join("ledger.sqlite");
    let args = ["--sqlite".to_owned(), path.display().to_string()];
    let plan = plan("ledger", 60, 4, 400);
    let ledger = LedgerProcesses::start(binary, &args, &[], plan.clients)?;
    let (log, window) = burst_while_full(&ledger, &plan, dir)?;
    let state = ledger.effects().ok();
    let up = ledger.servers.iter().all(|server| {
        let mut server = server
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        server.process.running() && server.ask("ping", Duration::from_secs(5)).is_ok()
    });
    drop(ledger);
    let checked = integrity(&path);
    let row = FaultRow::new(
        "SqliteLedger, disk full",
        &plan,
        &log,
        state.map(|(_, records)| records),
        Some(window),
    )
    .check("a ledger process did not stay up", up)
    .check(
        "the ledger's total is not one unit per key",
        state.is_some_and(|(total, _)| total == plan.keys as u64),
    )
    .check(format!("integrity_check: {checked:?}"), ok(&checked));
    Ok(full_checks(row, During::of(&log, window)))
}

fn ok(checked: &anyhow::Result<String>) -> bool {
    checked.as_ref().is_ok_and(|answer| answer == "ok")
}
