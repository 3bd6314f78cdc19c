//! Keyed payments to a `payments` server while a thousand connections hold unfinished request
//! heads, against the same payments with no attack, in the same run.
//!
//! Each round sends `--requests` fresh-key payments from `--concurrency` keep-alive clients
//! twice: once with no attack, once while `--stalled` connections each hold part of a head (an
//! attacker reopens any the server closes, so the attack lasts as long as the measurement). It
//! prints the p50 and p99 latency of both, per round and as the median round, and checks that
//! every payment was a 201 and that the server counted exactly one charge per payment.
//!
//! Bounded: fixed request counts, a few rounds, a hard time cap (`--max-seconds`); the server
//! is stopped by its own process id at the end.
//!
//! `just slow-clients [--stalled N] [--requests N] [--rounds R] ...`

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, ensure};
use clap::Parser;
use retrykey_server::loopback::LoopbackClient;
use retrykey_testkit::load::PaymentsProcess;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinSet;

#[derive(Debug, Parser)]
struct Args {
    /// The `payments` binary (built with it by `just slow-clients`).
    #[arg(long, value_name = "PATH")]
    payments: PathBuf,
    /// Connections holding an unfinished head during the attack.
    #[arg(long, default_value_t = 1_000)]
    stalled: u64,
    /// Payments per measurement (one with no attack, one during it, per round).
    #[arg(long, default_value_t = 20_000)]
    requests: u64,
    /// Concurrent clients, each on its own keep-alive connection.
    #[arg(long, default_value_t = 8)]
    concurrency: u64,
    /// Measured rounds; the median of each figure over the rounds is reported.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Give up (and fail) after this many seconds.
    #[arg(long, default_value_t = 300)]
    max_seconds: u64,
}

/// Latency percentiles of one measurement, in milliseconds.
#[derive(Debug, Clone, Copy)]
struct Latency {
    p50: f64,
    p99: f64,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    ensure!(
        args.stalled > 0 && args.requests > 0 && args.concurrency > 0 && args.rounds > 0,
        "--stalled, --requests, --concurrency and --rounds must be above zero"
    );
    retrykey_testkit::load::run_within(args.max_seconds, measure(&args))
}

async fn measure(args: &Args) -> anyhow::Result<()> {
    // Room for the attack and the clients, and for every payment's key; the default head
    // timeout (10 s) is what the attacker works against.
    let cap = (args.stalled + args.concurrency + 16).to_string();
    let entries = 2 * args.requests * args.rounds as u64 + 1;
    let flags = [
        "--max-connections".to_owned(),
        cap,
        "--max-entries".to_owned(),
        entries.to_string(),
        "--max-bytes".to_owned(),
        (entries * 4096).to_string(),
    ];
    let server = PaymentsProcess::start(&args.payments, &flags)?;
    let client = LoopbackClient::new(server.url.clone());
    let paid = Arc::new(AtomicU64::new(0));
    println!(
        "slow clients: {} payments from {} clients, with no attack and with {} unfinished heads held open",
        args.requests, args.concurrency, args.stalled
    );
    let mut rounds = Vec::new();
    for round in 0..args.rounds {
        let calm = payments(&client, args, &format!("calm-{round}"), &paid).await?;
        let attack = Attack::start(server.addr(), args.stalled).await?;
        let besieged = payments(&client, args, &format!("attack-{round}"), &paid).await?;
        let held = attack.stop().await;
        println!(
            "  round {}: no attack p50 {:.2} ms, p99 {:.2} ms; attacked p50 {:.2} ms, p99 {:.2} ms ({held} heads held)",
            round + 1,
            calm.p50,
            calm.p99,
            besieged.p50,
            besieged.p99
        );
        rounds.push((calm, besieged));
    }
    let median = |pick: fn(&(Latency, Latency)) -> f64| {
        let mut values: Vec<f64> = rounds.iter().map(pick).collect();
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    println!(
        "median of the rounds: p99 {:.2} ms with no attack, {:.2} ms attacked",
        median(|(calm, _)| calm.p99),
        median(|(_, attacked)| attacked.p99)
    );

    let count = client
        .get("/payments/count", &[])
        .await
        .map_err(|error| anyhow!(error))?
        .body;
    let expected = paid.load(Ordering::Relaxed);
    if !count.starts_with(&format!("{{\"charges\":{expected},")) {
        bail!("expected {expected} charges, the server reports {count}");
    }
    println!("charges: {expected}, one per payment");
    Ok(())
}

/// Sends `args.requests` fresh-key payments from `args.concurrency` clients; every one must be
/// a first-attempt 201.
async fn payments(
    client: &LoopbackClient,
    args: &Args,
    prefix: &str,
    paid: &Arc<AtomicU64>,
) -> anyhow::Result<Latency> {
    let next = Arc::new(AtomicU64::new(0));
    let mut workers = JoinSet::new();
    for _ in 0..args.concurrency {
        let (client, next, paid) = (client.clone(), Arc::clone(&next), Arc::clone(paid));
        let (requests, prefix) = (args.requests, prefix.to_owned());
        workers.spawn(async move {
            let mut latencies = Vec::new();
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= requests {
                    return Ok::<_, anyhow::Error>(latencies);
                }
                let key = format!("{prefix}-{n}");
                let sent = Instant::now();
                let reply = client
                    .post("/payments", &[("idempotency-key", &key)], r#"{"amount":5}"#)
                    .await
                    .map_err(|error| anyhow!(error))?;
                latencies.push(sent.elapsed());
                ensure!(
                    reply.status == 201 && !reply.replayed(),
                    "{key}: {} {}",
                    reply.status,
                    reply.body
                );
                paid.fetch_add(1, Ordering::Relaxed);
            }
        });
    }
    let mut all = Vec::new();
    while let Some(worker) = workers.join_next().await {
        all.extend(worker??);
    }
    all.sort();
    let at = |q: f64| {
        let index = ((all.len() as f64 * q).ceil() as usize).clamp(1, all.len()) - 1;
        all[index].as_secs_f64() * 1000.0
    };
    Ok(Latency {
        p50: at(0.50),
        p99: at(0.99),
    })
}

/// Connections that each send part of a request head and then nothing, reopened when closed.
struct Attack {
    tasks: JoinSet<()>,
    stop: Arc<AtomicBool>,
    held: Arc<AtomicU64>,
}

impl Attack {
    /// Opens `connections` stalled heads, and returns once all of them are held.
    async fn start(addr: &str, connections: u64) -> anyhow::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let held = Arc::new(AtomicU64::new(0));
        let mut tasks = JoinSet::new();
        for n in 0..connections {
            let (addr, stop, held) = (addr.to_owned(), Arc::clone(&stop), Arc::clone(&held));
            tasks.spawn(async move {
                let mut first = true;
                while !stop.load(Ordering::Relaxed) {
                    let Ok(mut stream) = TcpStream::connect(&addr).await else {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    };
                    let head = format!(
                        "POST /payments HTTP/1.1\r\nhost: 127.0.0.1\r\nidempotency-key: stalled-{n}\r\n"
                    );
                    if stream.write_all(head.as_bytes()).await.is_err() {
                        continue;
                    }
                    if first {
                        held.fetch_add(1, Ordering::Relaxed);
                        first = false;
                    }
                    // Wait for the server to give up on this head, then open another.
                    let mut sink = [0_u8; 512];
                    while matches!(stream.read(&mut sink).await, Ok(n) if n > 0) {}
                }
            });
        }
        let ready = Instant::now() + Duration::from_secs(60);
        while held.load(Ordering::Relaxed) < connections {
            ensure!(
                Instant::now() < ready,
                "the attack's connections did not open"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(Self { tasks, stop, held })
    }

    /// Ends the attack; returns how many heads were held at its start.
    async fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.tasks.shutdown().await;
        self.held.load(Ordering::Relaxed)
    }
}
