//! `just foreign-matrix`: a checkout killed with SIGKILL at every point of its path, crossed with
//! every fault the provider can be asked for; then the client's retry, or the completer, settles
//! the operation. Every row must hold: the provider charged once (none for a declined card), the
//! checkout holds one order, and the client's last answer is the key's replay.
//!
//! Each row runs on fresh files: a `provider`, then a `checkout` paused at the row's point;
//! the client's first request reaches the point (or ends, if the path does not pass it: a
//! declined card never reaches `charge-recorded`), the checkout is killed there and started again on
//! the same file and port, and once the dead attempt's lease has lapsed the row's resolver
//! finishes the operation.

use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use retrykey_faults::http::{HttpReply, request};
use retrykey_faults::process::{Spawned, line_reader, sibling, watchdog};

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

/// What one row found.
struct Row {
    passed: bool,
    charges: usize,
    orders: usize,
    status: String,
    answer: u16,
    wrong: Vec<String>,
}

fn main() -> ExitCode {
    watchdog("foreign-matrix", CAP);
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("foreign-matrix: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<bool> {
    let (provider, checkout) = (sibling("provider")?, sibling("checkout")?);
    println!(
        "{:<17} {:<13} {:<10} {:<7} {:>7} {:>6}  {:<9} {:>6}  verdict",
        "point", "fault", "settled by", "passed", "charges", "orders", "order", "answer"
    );
    let mut all_exact = true;
    let mut n = 0;
    for fault in FAULTS {
        for point in POINTS {
            for resolver in [Resolver::Retry, Resolver::Completer] {
                n += 1;
                let dir =
                    std::env::temp_dir().join(format!("foreign-matrix-{}-{n}", std::process::id()));
                std::fs::create_dir_all(&dir)?;
                let row = one_row(&provider, &checkout, &dir, point, fault, resolver);
                let _ = std::fs::remove_dir_all(&dir);
                let row =
                    row.with_context(|| format!("{point} x {fault} ({})", resolver.name()))?;
                let verdict = if row.wrong.is_empty() {
                    "ok".to_owned()
                } else {
                    all_exact = false;
                    format!("WRONG: {}", row.wrong.join("; "))
                };
                println!(
                    "{point:<17} {fault:<13} {:<10} {:<7} {:>7} {:>6}  {:<9} {:>6}  {verdict}",
                    resolver.name(),
                    if row.passed { "killed" } else { "not" },
                    row.charges,
                    row.orders,
                    row.status,
                    row.answer,
                );
            }
        }
    }
    println!(
        "{}",
        if all_exact {
            "every row exact"
        } else {
            "some rows are not exact"
        }
    );
    Ok(all_exact)
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

fn one_row(
    provider_bin: &Path,
    checkout_bin: &Path,
    dir: &Path,
    point: &str,
    fault: &str,
    resolver: Resolver,
) -> anyhow::Result<Row> {
    let path = |name: &str| -> String { dir.join(name).display().to_string() };
    let (_provider, _, provider) = start(
        provider_bin,
        &["--db", &path("provider.sqlite")],
        "provider",
    )?;
    if fault != "none" {
        let queued = format!(r#"{{"fault":"{fault}","times":1,"delay_ms":{SLOW_MS}}}"#);
        let reply = request(
            &provider,
            "POST /v1/faults HTTP/1.1\r\nContent-Type: application/json",
            &queued,
            Duration::from_secs(10),
        )?;
        if reply.status != 200 {
            bail!("the provider refused the fault: {reply:?}");
        }
    }
    let provider_url = format!("http://{provider}");
    let db = path("checkout.sqlite");
    let lease = format!("{}ms", LEASE.as_millis());
    let serve = [
        "serve",
        "--db",
        &db,
        "--provider",
        &provider_url,
        "--lease",
        &lease,
    ];
    let mut paused_args = serve.to_vec();
    paused_args.extend(["--pause-at", point]);
    let (first, lines, addr) = start(checkout_bin, &paused_args, "checkout")?;

    // The client's first request, on a thread: it ends when the checkout answers or dies.
    let client = std::thread::spawn({
        let addr = addr.clone();
        move || post(&addr, "/checkouts", BODY, Duration::from_secs(30))
    });
    let passed = paused(&lines, point, &client)?;
    drop(first); // SIGKILL by its id, then reaped
    let first_reply = client
        .join()
        .map_err(|_| anyhow::anyhow!("the client panicked"))?;
    let mut restart = serve.to_vec();
    restart.extend(["--listen", &addr]);
    let (_second, _, _) = start(checkout_bin, &restart, "checkout")?;
    // The dead attempt's lease must lapse before anyone else may take its key.
    std::thread::sleep(LEASE + Duration::from_millis(300));

    if resolver == Resolver::Completer && passed {
        let output = Command::new(checkout_bin)
            .args([
                "complete",
                "--db",
                &db,
                "--provider",
                &provider_url,
                "--idle",
                "1ms",
            ])
            .output()
            .context("cannot run the completer")?;
        if !output.status.success() {
            bail!(
                "the completer failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }
    let settled = settle(&addr)?;
    let replay = post(&addr, "/checkouts", BODY, Duration::from_secs(10))?;

    let declined = fault == "declined";
    let charges = get(&provider, "/v1/charges")?["charges"]
        .as_array()
        .map_or(0, Vec::len);
    let orders = get(&addr, "/orders")?;
    let listed = orders["orders"].as_array().cloned().unwrap_or_default();
    let status = listed
        .first()
        .and_then(|order| order["status"].as_str())
        .unwrap_or("-")
        .to_owned();
    let mut wrong = Vec::new();
    let expected_charges = usize::from(!declined);
    if charges != expected_charges {
        wrong.push(format!("{charges} charges, not {expected_charges}"));
    }
    if listed.len() != 1 {
        wrong.push(format!("{} orders, not 1", listed.len()));
    }
    let (expected_status, expected_answer) = if declined {
        ("declined", 402)
    } else {
        ("paid", 201)
    };
    if status != expected_status {
        wrong.push(format!("the order is {status}, not {expected_status}"));
    }
    if settled.status != expected_answer {
        wrong.push(format!("the client settled with {}", settled.status));
    }
    if !replay.replayed || replay.body != settled.body || replay.status != settled.status {
        wrong.push("the last answer is not the key's replay".to_owned());
    }
    if let Ok(first) = &first_reply
        && !passed
        && first.status != expected_answer
    {
        wrong.push(format!("the uncrashed request answered {}", first.status));
    }
    Ok(Row {
        passed,
        charges,
        orders: listed.len(),
        status,
        answer: settled.status,
        wrong,
    })
}

/// Whether the checkout printed `paused at POINT` before the client's request ended (a path
/// that does not pass the point ends first).
fn paused(
    lines: &Receiver<String>,
    point: &str,
    client: &std::thread::JoinHandle<std::io::Result<HttpReply>>,
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
