//! `just pg-faults`: keyed payments on two `payments --store postgres` replicas and on the
//! durable `PgLedger` (behind `crash-server` processes), while a PostgreSQL server of the run's
//! own is restarted fast, crashed and restarted, severed with `pg_terminate_backend`, and made
//! to lose the replies to commits (each service behind a fault proxy of its own, which cuts
//! the commit of the transaction that writes the effect); one table row per service and fault.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Parser;
use retrykey_faults::burst::{self, BurstPlan, Log};
use retrykey_faults::http::{self, PaymentsReplicas};
use retrykey_faults::lines::LedgerProcesses;
use retrykey_faults::own_pg::{OwnServer, StopMode, admin_query, can_run_server};
use retrykey_faults::process::{self, WatchedPayments, sibling};
use retrykey_faults::table::{self, FaultRow, Window};
use retrykey_testkit::proxy::{CommitCut, FaultProxy};

/// The whole run's cap: past it every process is killed and the run fails.
const CAP: Duration = Duration::from_secs(160);

/// How long one scenario's burst may run.
const BURST: Duration = Duration::from_secs(25);

/// When the fault comes, after the burst starts.
const FAULT_AFTER: Duration = Duration::from_millis(1500);

/// Blows of a repeated fault (severing, cut replies), and the pause between two.
const BLOWS: u64 = 3;
const BLOW_EVERY: Duration = Duration::from_millis(300);

/// The statement of the transaction whose commit a lost reply hits: the charge (with the key's
/// answer), and the ledger's record (with its effect). Any other commit passes.
const PAYMENTS_EFFECT: &str = "INSERT INTO payments";
const LEDGER_EFFECT: &str = "INSERT INTO operations";

/// The statement of a key's claim, the commit a lost claim reply hits (payments only: the ledger
/// claims nothing before its effect).
const PAYMENTS_CLAIM: &str = "INSERT INTO http_keys";

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
    LostClaim,
}

impl Fault {
    const ALL: [Fault; 5] = [
        Fault::FastRestart,
        Fault::ImmediateRestart,
        Fault::Terminate,
        Fault::LostCommit,
        Fault::LostClaim,
    ];

    fn name(self) -> &'static str {
        match self {
            Fault::FastRestart => "fast restart",
            Fault::ImmediateRestart => "immediate restart",
            Fault::Terminate => "pg_terminate_backend",
            Fault::LostCommit => "commit reply lost",
            Fault::LostClaim => "claim reply lost",
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
    let bin = match can_run_server() {
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
    let mut rows = Vec::new();
    for (number, fault) in Fault::ALL.into_iter().enumerate() {
        rows.extend(scenario(&mut server, &programs, fault, number)?);
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

/// The bursts' shapes: payments over two replicas, the ledger over a process per client.
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

/// A service's own fault proxy, for the lost replies (the other faults need none).
struct Cutter {
    proxy: FaultProxy,
    /// The statement whose transaction's commit it cuts.
    effect: &'static str,
}

/// The two services of one scenario, each on a schema of its own and, for the lost replies,
/// behind a fault proxy of its own.
struct Services {
    cutters: [Option<Cutter>; 2],
    replicas: Vec<WatchedPayments>,
    ledger: LedgerProcesses,
    pay_schema: String,
    ledger_schema: String,
}

impl Services {
    fn start(
        server: &OwnServer,
        programs: &Programs,
        fault: Fault,
        number: usize,
        ledger_clients: usize,
    ) -> anyhow::Result<Self> {
        let cutter = |effect: Option<&'static str>| -> anyhow::Result<Option<Cutter>> {
            let Some(effect) = effect else {
                return Ok(None);
            };
            let proxy = FaultProxy::in_front_of(&server.url()).context("starting a fault proxy")?;
            Ok(Some(Cutter { proxy, effect }))
        };
        let (pay, ledger) = match fault {
            Fault::LostCommit => (Some(PAYMENTS_EFFECT), Some(LEDGER_EFFECT)),
            Fault::LostClaim => (Some(PAYMENTS_CLAIM), None),
            _ => (None, None),
        };
        let cutters = [cutter(pay)?, cutter(ledger)?];
        let url = |cutter: &Option<Cutter>| match cutter {
            Some(cutter) => cutter.proxy.url(&server.url()),
            None => server.url(),
        };
        let pay_schema = format!("faults_pay_{number}");
        let replicas = start_replicas(&programs.payments, &url(&cutters[0]), &pay_schema)?;
        let ledger_schema = format!("faults_ledger_{number}");
        let ledger_url = url(&cutters[1]);
        let ledger = LedgerProcesses::start(
            &programs.crash_server,
            &["--pg-schema".into(), ledger_schema.clone()],
            &[("RETRYKEY_PG_URL", ledger_url.as_str())],
            ledger_clients,
        )?;
        Ok(Self {
            cutters,
            replicas,
            ledger,
            pay_schema,
            ledger_schema,
        })
    }

    /// The replicas, as a burst sends to them.
    fn payments(&self) -> PaymentsReplicas {
        PaymentsReplicas {
            replicas: self
                .replicas
                .iter()
                .map(|replica| replica.server.addr().to_owned())
                .collect(),
        }
    }
}

/// One fault under both services, each on schemas of its own; their rows (a lost claim reply,
/// payments' alone: the ledger claims nothing).
fn scenario(
    server: &mut OwnServer,
    programs: &Programs,
    fault: Fault,
    number: usize,
) -> anyhow::Result<Vec<FaultRow>> {
    let (pay_plan, ledger_plan) = plans(number);
    let services = Services::start(server, programs, fault, number, ledger_plan.clients)?;
    let (payments, ledger) = (services.payments(), &services.ledger);
    let stop = Instant::now() + BURST;
    let (pay_log, ledger_log, done) = thread::scope(|scope| {
        let pay = scope.spawn(|| burst::run(&payments, &pay_plan, stop));
        let led = scope.spawn(|| burst::run(ledger, &ledger_plan, stop));
        thread::sleep(FAULT_AFTER);
        let done = inject(server, &services.cutters, fault);
        (join(pay), join(led), done)
    });
    let (window, [pay_check, ledger_check]) = done?;
    let name = fault.name();
    let charges = http::charges(&payments.replicas[0], Duration::from_secs(15)).ok();
    let pay_row = FaultRow::new(
        &format!("payments, {name}"),
        &pay_plan,
        &pay_log,
        charges,
        Some(window),
    )
    .check(pay_check.0, pay_check.1);
    let state = ledger.effects().ok();
    let ledger_row = FaultRow::new(
        &format!("PgLedger, {name}"),
        &ledger_plan,
        &ledger_log,
        state.map(|(_, records)| records),
        Some(window),
    )
    .check(ledger_check.0, ledger_check.1)
    .check(
        "the ledger's total is not one unit per key",
        state.is_some_and(|(total, _)| total == ledger_plan.keys as u64),
    );
    match fault {
        Fault::LostCommit => {}
        Fault::LostClaim => return Ok(vec![pay_row]),
        _ => return Ok(vec![pay_row, ledger_row]),
    }
    let [pay_replay, ledger_replay] = replay_checks(
        &server.url(),
        &services,
        [&pay_log, &ledger_log],
        &ledger_plan,
    );
    Ok(vec![
        pay_row.check(pay_replay.0, pay_replay.1),
        ledger_row.check(ledger_replay.0, ledger_replay.1),
    ])
}

/// After lost replies: a key whose answer was lost with its commit's reply is settled by a
/// replay of the stored answer, and the database at `url` holds one effect for it (the record
/// decided, not a second charge). One check per service, read from `logs` (payments, ledger).
fn replay_checks(
    url: &str,
    services: &Services,
    [pay_log, ledger_log]: [&Log; 2],
    ledger_plan: &BurstPlan,
) -> [Check; 2] {
    let pay_schema = &services.pay_schema;
    let one_charge = |identity: &String| {
        payment_number(identity).is_some_and(|payment| {
            let sql = format!(
                "SELECT count(*) FROM {pay_schema}.payments WHERE entry_id =
                 (SELECT entry_id FROM {pay_schema}.payments WHERE number = {payment})"
            );
            admin_query(url, &sql).is_ok_and(|count| count == 1)
        })
    };
    let one_record = |key: &usize| {
        let sql = format!(
            "SELECT count(*) FROM {}.operations WHERE key = '{}'",
            services.ledger_schema,
            ledger_plan.key(*key)
        );
        admin_query(url, &sql).is_ok_and(|count| count == 1)
    };
    [
        (
            "no key whose commit's reply was lost was settled by a replayed 201 with one charge"
                .to_owned(),
            settled_by_replay(pay_log, one_charge),
        ),
        (
            "no key whose commit's reply was lost was settled by a replayed receipt with one record"
                .to_owned(),
            ledger_log.settled_by_replay.iter().any(one_record),
        ),
    ]
}

/// Whether a key of `log` was settled by a replay (its first success replayed an attempt that
/// had committed unseen) whose answer passes `holds`.
fn settled_by_replay(log: &Log, holds: impl Fn(&String) -> bool) -> bool {
    log.settled_by_replay
        .iter()
        .filter_map(|key| log.firsts.get(key))
        .any(holds)
}

/// The `N` of a payment's identity, `201 /payments/N {...}`.
fn payment_number(identity: &str) -> Option<u64> {
    identity
        .split_whitespace()
        .nth(1)?
        .strip_prefix("/payments/")?
        .parse()
        .ok()
}

fn join(handle: thread::ScopedJoinHandle<'_, Log>) -> Log {
    handle.join().expect("a burst panicked")
}

/// Two `payments` replicas on one schema of the database at `url`.
fn start_replicas(binary: &Path, url: &str, schema: &str) -> anyhow::Result<Vec<WatchedPayments>> {
    (0..2)
        .map(|_| {
            let mut command = Command::new(binary);
            command
                .env("RETRYKEY_PG_URL", url)
                .args(["--store", "postgres", "--pg-schema", schema])
                // A short lease: an attempt cut off mid-way frees its key soon.
                .args(["--work-ms", "20", "--lease", "2s"]);
            process::payments(command)
        })
        .collect()
}

/// What a fault run checks of each service that the fault really happened: its wording as a
/// failure, and whether it held.
type Check = (String, bool);

/// Does `fault`; returns when it was done, and for each service (payments, then the ledger) a
/// check that the fault really reached it.
fn inject(
    server: &mut OwnServer,
    cutters: &[Option<Cutter>; 2],
    fault: Fault,
) -> anyhow::Result<(Window, [Check; 2])> {
    let start = Instant::now();
    let checks = match fault {
        Fault::FastRestart | Fault::ImmediateRestart => {
            let before = server.pid();
            let how = if fault == Fault::FastRestart {
                StopMode::Fast
            } else {
                StopMode::Immediate
            };
            server.restart(how)?;
            let check = (
                "the server was not restarted".to_owned(),
                server.pid() != before,
            );
            [check.clone(), check]
        }
        Fault::Terminate => sever(server)?,
        Fault::LostCommit | Fault::LostClaim => cut_commits(cutters),
    };
    let window = Window {
        start,
        end: Instant::now(),
    };
    Ok((window, checks))
}

/// Severs every connection of each service, a few times over; a check per service that some
/// of its connections were.
fn sever(server: &OwnServer) -> anyhow::Result<[Check; 2]> {
    let mut severed = [0, 0];
    for _ in 0..BLOWS {
        for (count, application) in severed.iter_mut().zip(["retrykey-replicas", "retrykey"]) {
            *count += admin_query(
                &server.url(),
                &format!(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                     WHERE application_name = '{application}'
                       AND pid <> pg_backend_pid()"
                ),
            )?;
        }
        thread::sleep(BLOW_EVERY);
    }
    Ok(severed.map(|count| {
        (
            format!("no connection of it was severed ({count})"),
            count > 0,
        )
    }))
}

/// Loses the reply to the next commit of each service's effect, a few times over; a check per
/// service that its own proxy cut every one.
fn cut_commits(cutters: &[Option<Cutter>; 2]) -> [Check; 2] {
    for _ in 0..BLOWS {
        for cutter in cutters.iter().flatten() {
            cutter
                .proxy
                .arm_where(CommitCut::AfterCommit, cutter.effect);
        }
        let armed = Instant::now();
        while cutters
            .iter()
            .flatten()
            .any(|cutter| cutter.proxy.is_armed())
            && armed.elapsed() < Duration::from_secs(5)
        {
            thread::sleep(Duration::from_millis(5));
        }
        thread::sleep(BLOW_EVERY);
    }
    cutters.each_ref().map(|cutter| {
        let cut = cutter.as_ref().map_or(0, |cutter| cutter.proxy.cuts());
        (
            format!("only {cut} of {BLOWS} commits' replies were cut"),
            cut == BLOWS,
        )
    })
}
