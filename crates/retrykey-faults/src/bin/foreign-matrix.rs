//! `just foreign-matrix [sqlite|postgres]`: a checkout killed with SIGKILL at every point of its path, crossed with
//! every fault the provider can be asked for; then the client's retry, or the completer, settles
//! the operation. Every row must hold: the provider charged once (none for a declined card), the
//! checkout holds one order, and the client's last answer is the key's replay.
//!
//! Each row runs on a fresh store (a SQLite file, or a PostgreSQL schema of its own, dropped
//! after the row) and a fresh provider: a `provider`, then a `checkout` paused at the row's point;
//! the client's first request reaches the point (or ends, if the path does not pass it: a
//! declined card never reaches `charge-recorded`), the checkout is killed there and started again on
//! the same file and port, and once the dead attempt's lease has lapsed the row's resolver
//! finishes the operation.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::{Parser, ValueEnum};
use retrykey_faults::http::{HttpReply, request};
use retrykey_faults::process::{Spawned, line_reader, sibling, watchdog};

/// Kill a checkout at every point of its path, crossed with every fault of the provider, and
/// check that the client's retry or the completer settles each operation exactly once.
#[derive(Debug, Parser)]
struct Args {
    /// Where the checkout keeps its keys and rows (postgres reads RETRYKEY_PG_URL).
    #[arg(value_enum, default_value_t = Database::Sqlite)]
    database: Database,
}

/// The checkout's database.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Database {
    Sqlite,
    Postgres,
}

/// The checkout's points, in the order a request passes them.
const POINTS: [&str; 4] = [
    "order-created",
    "provider-answered",
    "charge-recorded",
    "order-confirmed",
];
/// The provider's faults, and `none`.
const FAULTS: [&str; 6] = [
    "none",
    "reply-lost",
    "error-before",
    "error-after",
    "slow",
    "declined",
];
/// The checkout's lease in every row: short, so that a retry may take over soon.
const LEASE: Duration = Duration::from_secs(1);
/// How long `slow` makes the provider wait: past the checkout's one-second attempt timeout.
const SLOW_MS: u64 = 1500;
/// The whole run's cap: the watchdog kills everything past it.
const CAP: Duration = Duration::from_secs(900);
const KEY: &str = "cart-1";
const BODY: &str = r#"{"amount":500}"#;

/// Who finishes the operation after the crash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Resolver {
    /// The client, retrying under its key.
    Retry,
    /// The completer, before any retry.
    Completer,
}

impl Resolver {
    fn name(self) -> &'static str {
        match self {
            Self::Retry => "retry",
            Self::Completer => "completer",
        }
    }
}

/// One row's case.
struct Case<'a> {
    point: &'a str,
    fault: &'a str,
    resolver: Resolver,
}

/// The programs, and where one row keeps its state.
struct Rig {
    provider: PathBuf,
    checkout: PathBuf,
    dir: PathBuf,
    /// The checkout's `--store` and `--pg-schema` flags.
    store: Vec<String>,
    /// With postgres: the server's URL and the row's schema, dropped after the row.
    schema: Option<(String, String)>,
}

/// What one row found.
struct Row {
    passed: bool,
    charges: usize,
    orders: usize,
    shipments: i64,
    status: String,
    answer: u16,
    wrong: Vec<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    watchdog("foreign-matrix", CAP);
    match run(args.database) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("foreign-matrix: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(database: Database) -> anyhow::Result<bool> {
    let url = match database {
        Database::Sqlite => None,
        Database::Postgres => Some(std::env::var("RETRYKEY_PG_URL").ok().filter(|url| !url.is_empty()).context(
            "postgres needs a server: set RETRYKEY_PG_URL (`eval \"$(just postgres)\"` starts one)",
        )?),
    };
    let (provider, checkout) = (sibling("provider")?, sibling("checkout")?);
    println!(
        "{:<17} {:<13} {:<10} {:<7} {:>7} {:>6} {:>7}  {:<9} {:>6}  verdict",
        "point", "fault", "settled by", "passed", "charges", "orders", "shipped", "order", "answer"
    );
    let (mut all_exact, mut n) = (true, 0);
    for fault in FAULTS {
        for point in POINTS {
            for resolver in [Resolver::Retry, Resolver::Completer] {
                n += 1;
                let case = Case {
                    point,
                    fault,
                    resolver,
                };
                let rig = Rig::new(&provider, &checkout, url.as_deref(), n)?;
                let row = one_row(&rig, &case);
                rig.clean();
                let row =
                    row.with_context(|| format!("{point} x {fault} ({})", resolver.name()))?;
                all_exact &= row.wrong.is_empty();
                print_row(&case, &row);
            }
        }
    }
    let verdict = if all_exact {
        "every row exact"
    } else {
        "some rows are not exact"
    };
    println!("{verdict}");
    Ok(all_exact)
}

fn print_row(case: &Case<'_>, row: &Row) {
    let verdict = if row.wrong.is_empty() {
        "ok".to_owned()
    } else {
        format!("WRONG: {}", row.wrong.join("; "))
    };
    println!(
        "{:<17} {:<13} {:<10} {:<7} {:>7} {:>6} {:>7}  {:<9} {:>6}  {verdict}",
        case.point,
        case.fault,
        case.resolver.name(),
        if row.passed { "killed" } else { "not" },
        row.charges,
        row.orders,
        row.shipments,
        row.status,
        row.answer,
    );
}

impl Rig {
    /// Row `n`'s folder, and its store: a file in it, or a schema of its own.
    fn new(provider: &Path, checkout: &Path, url: Option<&str>, n: usize) -> anyhow::Result<Self> {
        let dir = std::env::temp_dir().join(format!("foreign-matrix-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let (store, schema) = match url {
            None => {
                let file = dir.join("checkout.sqlite").display().to_string();
                (vec!["--store".to_owned(), format!("sqlite:{file}")], None)
            }
            Some(url) => {
                let schema = format!("foreign_matrix_{}_{n}", std::process::id());
                let flags = ["--store", "postgres", "--pg-schema", &schema].map(str::to_owned);
                (flags.to_vec(), Some((url.to_owned(), schema)))
            }
        };
        Ok(Self {
            provider: provider.to_owned(),
            checkout: checkout.to_owned(),
            dir,
            store,
            schema,
        })
    }

    /// The checkout's arguments: `command`, the store's flags, then `rest`.
    fn checkout_args<'a>(&'a self, command: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec![command];
        args.extend(self.store.iter().map(String::as_str));
        args.extend(rest);
        args
    }

    /// Deletes the row's folder, and its schema.
    fn clean(&self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        if let Some((url, schema)) = &self.schema
            && let Err(error) = drop_schema(url, schema)
        {
            eprintln!("foreign-matrix: schema {schema} left behind: {error:#}");
        }
    }
}

/// `DROP SCHEMA name CASCADE` on the server at `url`.
fn drop_schema(url: &str, schema: &str) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
        let connection = tokio::spawn(connection);
        client
            .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
            .await?;
        drop(client);
        let _ = connection.await;
        Ok(())
    })
}

/// A program started with its stdout piped, and the address it printed.
fn start(
    binary: &Path,
    args: &[&str],
    name: &str,
) -> anyhow::Result<(Spawned, Receiver<String>, String)> {
    let mut command = Command::new(binary);
    command
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut spawned = Spawned::start(command, name)?;
    let lines = line_reader(spawned.stdout()?);
    let line = lines
        .recv_timeout(Duration::from_secs(30))
        .with_context(|| format!("{name} printed no address"))?;
    let addr = line
        .strip_prefix("listening on http://")
        .with_context(|| format!("{name} printed {line:?}"))?
        .to_owned();
    Ok((spawned, lines, addr))
}

fn post(addr: &str, path: &str, body: &str, deadline: Duration) -> std::io::Result<HttpReply> {
    let head =
        format!("POST {path} HTTP/1.1\r\nContent-Type: application/json\r\nIdempotency-Key: {KEY}");
    request(addr, &head, body, deadline)
}

fn get(addr: &str, path: &str) -> anyhow::Result<serde_json::Value> {
    let reply = request(
        addr,
        &format!("GET {path} HTTP/1.1"),
        "",
        Duration::from_secs(10),
    )?;
    serde_json::from_str(&reply.body).with_context(|| format!("GET {path}: {:?}", reply.body))
}

/// A provider on the row's folder, with the row's fault queued; returns it and its address.
fn provider(rig: &Rig, fault: &str) -> anyhow::Result<(Spawned, String)> {
    let db = rig.dir.join("provider.sqlite").display().to_string();
    let (spawned, _, addr) = start(&rig.provider, &["--db", &db], "provider")?;
    if fault != "none" {
        let queued = format!(r#"{{"fault":"{fault}","times":1,"delay_ms":{SLOW_MS}}}"#);
        let head = "POST /v1/faults HTTP/1.1\r\nContent-Type: application/json";
        let reply = request(&addr, head, &queued, Duration::from_secs(10))?;
        if reply.status != 200 {
            bail!("the provider refused the fault: {reply:?}");
        }
    }
    Ok((spawned, addr))
}

fn one_row(rig: &Rig, case: &Case<'_>) -> anyhow::Result<Row> {
    let (_provider, provider) = provider(rig, case.fault)?;
    let provider_url = format!("http://{provider}");
    let lease = format!("{}ms", LEASE.as_millis());
    let serve = rig.checkout_args("serve", &["--provider", &provider_url, "--lease", &lease]);
    let mut paused_args = serve.clone();
    paused_args.extend(["--pause-at", case.point]);
    let (first, lines, addr) = start(&rig.checkout, &paused_args, "checkout")?;

    // The client's first request, on a thread: it ends when the checkout answers or dies.
    let client = std::thread::spawn({
        let addr = addr.clone();
        move || post(&addr, "/checkouts", BODY, Duration::from_secs(30))
    });
    let passed = paused(&lines, case.point, &client)?;
    drop(first); // SIGKILL by its id, then reaped
    let first_reply = client
        .join()
        .map_err(|_| anyhow::anyhow!("the client panicked"))?;
    let mut restart = serve.clone();
    restart.extend(["--listen", &addr]);
    let (_second, _, _) = start(&rig.checkout, &restart, "checkout")?;
    // The dead attempt's lease must lapse before anyone else may take its key.
    std::thread::sleep(LEASE + Duration::from_millis(300));
    if case.resolver == Resolver::Completer && passed {
        complete(rig, &provider_url)?;
    }
    let settled = settle(&addr)?;
    let replay = post(&addr, "/checkouts", BODY, Duration::from_secs(10))?;
    let uncrashed = first_reply.ok().filter(|_| !passed);
    judge(
        case,
        passed,
        &provider,
        &addr,
        &settled,
        &replay,
        uncrashed.as_ref(),
    )
}

/// One run of the completer on the row's store.
fn complete(rig: &Rig, provider_url: &str) -> anyhow::Result<()> {
    let args = rig.checkout_args("complete", &["--provider", provider_url, "--idle", "1ms"]);
    let output = Command::new(&rig.checkout)
        .args(args)
        .output()
        .context("cannot run the completer")?;
    if !output.status.success() {
        bail!(
            "the completer failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(())
}

/// The row's verdict, from what the provider and the checkout hold and what the client got.
fn judge(
    case: &Case<'_>,
    passed: bool,
    provider: &str,
    addr: &str,
    settled: &HttpReply,
    replay: &HttpReply,
    uncrashed: Option<&HttpReply>,
) -> anyhow::Result<Row> {
    let charges = get(provider, "/v1/charges")?["charges"]
        .as_array()
        .map_or(0, Vec::len);
    let orders = get(addr, "/orders")?;
    let listed = orders["orders"].as_array().cloned().unwrap_or_default();
    let first = listed.first();
    let status = (first.and_then(|order| order["status"].as_str()))
        .unwrap_or("-")
        .to_owned();
    let shipments = (listed.iter())
        .filter_map(|order| order["shipments"].as_i64())
        .sum();
    let mut row = Row {
        passed,
        charges,
        orders: listed.len(),
        shipments,
        status,
        answer: settled.status,
        wrong: Vec::new(),
    };
    row.wrong = wrong(case, &row, settled, replay, uncrashed);
    Ok(row)
}

/// What in `row` differs from one operation settled once.
fn wrong(
    case: &Case<'_>,
    row: &Row,
    settled: &HttpReply,
    replay: &HttpReply,
    uncrashed: Option<&HttpReply>,
) -> Vec<String> {
    let declined = case.fault == "declined";
    let (expected_status, expected_answer) = if declined {
        ("declined", 402)
    } else {
        ("paid", 201)
    };
    let expected_charges = usize::from(!declined);
    let mut wrong = Vec::new();
    if row.charges != expected_charges {
        wrong.push(format!("{} charges, not {expected_charges}", row.charges));
    }
    if row.orders != 1 {
        wrong.push(format!("{} orders, not 1", row.orders));
    }
    if row.shipments != i64::from(!declined) {
        wrong.push(format!("{} shipments", row.shipments));
    }
    if row.status != expected_status {
        wrong.push(format!(
            "the order is {}, not {expected_status}",
            row.status
        ));
    }
    if settled.status != expected_answer {
        wrong.push(format!("the client settled with {}", settled.status));
    }
    if !replay.replayed || replay.body != settled.body || replay.status != settled.status {
        wrong.push("the last answer is not the key's replay".to_owned());
    }
    if let Some(first) = uncrashed
        && first.status != expected_answer
    {
        wrong.push(format!("the uncrashed request answered {}", first.status));
    }
    wrong
}

/// Whether the checkout printed `paused at POINT` before the client's request ended (a path
/// that does not pass the point ends first).
fn paused(
    lines: &Receiver<String>,
    point: &str,
    client: &JoinHandle<std::io::Result<HttpReply>>,
) -> anyhow::Result<bool> {
    let wanted = format!("paused at {point}");
    let until = Instant::now() + Duration::from_secs(30);
    while Instant::now() < until {
        match lines.recv_timeout(Duration::from_millis(50)) {
            Ok(line) if line == wanted => return Ok(true),
            Ok(_) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => bail!("the checkout died before {point}"),
        }
        if client.is_finished() {
            return Ok(false);
        }
    }
    bail!("the checkout neither reached {point} nor answered within 30 s")
}

/// Retries the checkout under the key until it gives a final answer (201 or 402).
fn settle(addr: &str) -> anyhow::Result<HttpReply> {
    let until = Instant::now() + Duration::from_secs(30);
    let mut last = None;
    while Instant::now() < until {
        match post(addr, "/checkouts", BODY, Duration::from_secs(10)) {
            Ok(reply) if matches!(reply.status, 201 | 402) => return Ok(reply),
            other => last = Some(format!("{other:?}")),
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    bail!(
        "no final answer within 30 s; last: {}",
        last.unwrap_or_default()
    )
}
