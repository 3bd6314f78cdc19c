//! `just pg-faults`: keyed payments on two `payments --store postgres` replicas and on the
//! durable `PgLedger` (behind `crash-server` processes), while a PostgreSQL server of the run's
//! own is restarted fast, crashed and restarted, severed with `pg_terminate_backend`, and made
//! to lose the replies to COMMITs; one table row per service and fault.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Parser;
use retrykey_faults::burst::{self, BurstPlan, Log};
use retrykey_faults::http::{self, PaymentsReplicas};
use retrykey_faults::lines::LedgerProcesses;
use retrykey_faults::own_pg::{OwnServer, StopMode, admin_query, server_binaries};
use retrykey_faults::process::{self, Payments, sibling};
use retrykey_faults::table::{self, FaultRow, Window};
use retrykey_testkit::proxy::{CommitCut, FaultProxy};

/// The whole run's cap: past it every process is killed and the run fails.
const CAP: Duration = Duration::from_secs(120);

/// How long one scenario's burst may run.
const BURST: Duration = Duration::from_secs(25);

/// When the fault comes, after the burst starts.
const FAULT_AFTER: Duration = Duration::from_millis(1500);

/// Blows of a repeated fault (severing, cut replies), and the pause between two.
const BLOWS: u32 = 3;
const BLOW_EVERY: Duration = Duration::from_millis(300);

/// Restart, crash, sever and cut a PostgreSQL server of its own under keyed payments and the
/// durable ledger; print the table; exit 1 if any row fails. Skips (exit 0) without the server's
/// programs.
#[derive(Debug, Parser)]
struct Args {}

/// A fault done to the server during a burst.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    FastRestart,
    ImmediateRestart,
    Terminate,
    LostCommit,
}

impl Fault {
    const ALL: [Fault; 4] = [
        Fault::FastRestart,
        Fault::ImmediateRestart,
        Fault::Terminate,
        Fault::LostCommit,
    ];

    fn name(self) -> &'static str {
        match self {
            Fault::FastRestart => "fast restart",
            Fault::ImmediateRestart => "immediate restart",
            Fault::Terminate => "pg_terminate_backend",
            Fault::LostCommit => "COMMIT reply lost",
        }
    }
}

/// The programs the run starts.
struct Programs {
    payments: PathBuf,
    crash_server: PathBuf,
}

fn main() -> ExitCode {
    let _args = Args::parse();
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("pg-faults: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<bool> {
    let bin = match server_binaries() {
        Ok(bin) => bin,
        Err(reason) => {
            println!("pg-faults: skipped ({reason})");
            return Ok(true);
        }
    };
    let programs = Programs {
        payments: sibling("payments")?,
        crash_server: sibling("crash-server")?,
    };
    process::watchdog("pg-faults", CAP);
    let started = Instant::now();
    let mut server = OwnServer::start(bin).context("starting a PostgreSQL server of its own")?;
    let proxy = FaultProxy::in_front_of(&server.url()).context("starting the fault proxy")?;
    let mut rows = Vec::new();
    for (number, fault) in Fault::ALL.into_iter().enumerate() {
        rows.extend(scenario(&mut server, &proxy, &programs, fault, number)?);
    }
    print!("{}", table::render(&rows));
    println!(
        "pg-faults: fault = from its first blow to the server back or the last blow struck; \
         reconnect = from then to the first key settled; {} rows in {:.1} s",
        rows.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(rows.iter().all(|row| row.failures().is_empty()))
}

/// The bursts' shapes: payments over two replicas, the ledger over three processes.
fn plans(number: usize) -> (BurstPlan, BurstPlan) {
    let payments = BurstPlan {
        keys: 160,
        clients: 8,
        prefix: format!("pay-{number}"),
        deadline: Duration::from_secs(12),
        max_attempts: 40,
        pace: Duration::from_millis(150),
    };
    let ledger = BurstPlan {
        keys: 60,
        clients: 3,
        prefix: format!("led-{number}"),
        max_attempts: 40,
        pace: Duration::from_millis(150),
        ..payments.clone()
    };
    (payments, ledger)
}

/// One fault under both services, each on schemas of its own; their two rows.
fn scenario(
    server: &mut OwnServer,
    proxy: &FaultProxy,
    programs: &Programs,
    fault: Fault,
    number: usize,
) -> anyhow::Result<[FaultRow; 2]> {
    let url = match fault {
        Fault::LostCommit => proxy.url(&server.url()),
        _ => server.url(),
    };
    let replicas = start_replicas(&programs.payments, &url, number)?;
    let schema = format!("faults_ledger_{number}");
    let env = [("RETRYKEY_PG_URL", url.as_str())];
    let ledger = LedgerProcesses::start(
        &programs.crash_server,
        &["--pg-schema".into(), schema],
        &env,
        3,
    )?;
    let payments = PaymentsReplicas {
        replicas: replicas
            .iter()
            .map(|replica| replica.server.addr().to_owned())
            .collect(),
    };
    let (pay_plan, ledger_plan) = plans(number);
    let stop = Instant::now() + BURST;
    let (pay_log, ledger_log, done) = thread::scope(|scope| {
        let pay = scope.spawn(|| burst::run(&payments, &pay_plan, stop));
        let led = scope.spawn(|| burst::run(&ledger, &ledger_plan, stop));
        thread::sleep(FAULT_AFTER);
        let done = inject(server, proxy, fault);
        (join(pay), join(led), done)
    });
    let (window, what, held) = done?;
    let name = fault.name();
    let charges = http::charges(&payments.replicas[0], Duration::from_secs(15)).ok();
    let pay_row = FaultRow::new(
        &format!("payments, {name}"),
        &pay_plan,
        &pay_log,
        charges,
        Some(window),
    )
    .check(what.clone(), held);
    let state = ledger.effects().ok();
    let ledger_row = FaultRow::new(
        &format!("PgLedger, {name}"),
        &ledger_plan,
        &ledger_log,
        state.map(|(_, records)| records),
        Some(window),
    )
    .check(what, held)
    .check(
        "the ledger's total is not one unit per key",
        state.is_some_and(|(total, _)| total == ledger_plan.keys as u64),
    );
    Ok([pay_row, ledger_row])
}

fn join(handle: thread::ScopedJoinHandle<'_, Log>) -> Log {
    handle.join().expect("a burst panicked")
}

/// Two `payments` replicas on one schema of the database at `url`.
fn start_replicas(binary: &Path, url: &str, number: usize) -> anyhow::Result<Vec<Payments>> {
    (0..2)
        .map(|_| {
            let mut command = Command::new(binary);
            command
                .env("RETRYKEY_PG_URL", url)
                .args(["--store", "postgres", "--pg-schema"])
                .arg(format!("faults_pay_{number}"))
                // A short lease: an attempt cut off mid-way frees its key soon.
                .args(["--work-ms", "20", "--lease", "2s"]);
            process::payments(command)
        })
        .collect()
}

/// Does `fault`; returns when it was done, and a check that it really happened (its wording
/// is the failure's) with whether it held.
fn inject(
    server: &mut OwnServer,
    proxy: &FaultProxy,
    fault: Fault,
) -> anyhow::Result<(Window, String, bool)> {
    let start = Instant::now();
    let (what, held) = match fault {
        Fault::FastRestart | Fault::ImmediateRestart => {
            let before = server.pid();
            let how = if fault == Fault::FastRestart {
                StopMode::Fast
            } else {
                StopMode::Immediate
            };
            server.restart(how)?;
            (
                "the server was not restarted".to_owned(),
                server.pid() != before,
            )
        }
        Fault::Terminate => {
            let mut severed = 0;
            for _ in 0..BLOWS {
                severed += admin_query(
                    &server.url(),
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                     WHERE application_name IN ('retrykey-replicas', 'retrykey')
                       AND pid <> pg_backend_pid()",
                )?;
                thread::sleep(BLOW_EVERY);
            }
            (
                format!("no connection was severed ({severed})"),
                severed > 0,
            )
        }
        Fault::LostCommit => {
            let mut cut = 0;
            for _ in 0..BLOWS {
                proxy.arm(CommitCut::AfterCommit);
                let armed = Instant::now();
                while proxy.is_armed() && armed.elapsed() < Duration::from_secs(5) {
                    thread::sleep(Duration::from_millis(5));
                }
                cut += u32::from(!proxy.is_armed());
                thread::sleep(BLOW_EVERY);
            }
            (
                format!("only {cut} of {BLOWS} COMMIT replies were cut"),
                cut == BLOWS,
            )
        }
    };
    let window = Window {
        start,
        end: Instant::now(),
    };
    Ok((window, what, held))
}
