//! Loopback load: the payments handler bare and behind the layer (fresh keys, one replayed key,
//! no key). Every request carries one header of the same size (the key, or a request id the
//! layer ignores), made before the clock starts. Prints throughput, latency percentiles and heap
//! allocations per request per path, and the fresh key's share of the no-key rate in every
//! round. Bounded: a fixed number of requests per round, a few rounds, and a hard time cap.
//!
//! `cargo run --release -p retrykey-benches --bin load -- [--requests N] [--concurrency C] [--rounds R] [--work-us U]`

use std::alloc::System;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use retrykey_http::payments::Payments;
use retrykey_http::{BoxError, IdempotencyLayer, StoreLimits};
use retrykey_server::loopback::{LoopbackClient, Server};
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};
use tower_layer::Layer;

/// The system allocator, counting what it hands out: the whole process's heap work (the
/// clients' included, the same on every path), so paths compare by their difference.
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Allocations (a reallocation counts as one) and bytes allocated so far, process-wide.
fn allocated() -> (u64, u64) {
    let stats = GLOBAL.stats();
    (
        (stats.allocations + stats.reallocations) as u64,
        stats.bytes_allocated as u64,
    )
}

#[derive(Debug, Parser)]
struct Args {
    /// Requests per path per round.
    #[arg(long, default_value_t = 20_000)]
    requests: u64,
    /// Concurrent clients (each on its own keep-alive connection).
    #[arg(long, default_value_t = 32)]
    concurrency: u64,
    /// Rounds; each round runs every path once, in turn, and the median round is reported.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Microseconds of work per charge in the handler (0: the handler is nearly free).
    #[arg(long, default_value_t = 0)]
    work_us: u64,
    /// How long the fresh-key store keeps a record, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    retention_ms: u64,
    /// Only these paths (comma-separated: bare, fresh, replay, keyless); default all.
    #[arg(long, value_delimiter = ',')]
    paths: Vec<String>,
    /// Give up (and report what was measured) after this many seconds.
    #[arg(long, default_value_t = 90)]
    max_seconds: u64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Path {
    Bare,
    Fresh,
    Replay,
    Keyless,
}

impl Path {
    const ALL: [Path; 4] = [Path::Bare, Path::Fresh, Path::Keyless, Path::Replay];

    fn name(self) -> &'static str {
        match self {
            Path::Bare => "bare handler (no layer)",
            Path::Fresh => "layer, fresh key per request",
            Path::Replay => "layer, replay of one stored key",
            Path::Keyless => "layer, no key (pass-through)",
        }
    }
}

struct Measured {
    rps: f64,
    p50: Duration,
    p99: Duration,
    /// Heap allocations per request, server and clients together.
    allocations: f64,
    /// Bytes allocated per request.
    bytes: f64,
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<(), BoxError> {
    let args = Args::parse();
    let deadline = Instant::now() + Duration::from_secs(args.max_seconds);
    let work = Duration::from_micros(args.work_us);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "loopback load: {} requests x {} rounds per path, {} clients, handler work {} us, {} cores",
        args.requests, args.rounds, args.concurrency, args.work_us, threads
    );

    let bare_payments = Payments::new(work);
    let bare = Server::start(bare_payments.service()).await?;
    let layered_payments = Payments::new(work);
    // Steady state: records expire after a second (by default), so the store holds about one
    // second of traffic (a 24-hour retention would make this a measurement of heap growth).
    let limits = StoreLimits {
        max_entries: 1_000_000,
        max_bytes: 1 << 30,
        retention: Duration::from_millis(args.retention_ms),
    };
    let layer = IdempotencyLayer::builder().store_limits(limits).build();
    let layered = Server::start(layer.layer(layered_payments.service())).await?;
    // The replayed key lives in a store with the default 24-hour retention: charged once.
    let replayed_payments = Payments::new(work);
    let replayed =
        Server::start(IdempotencyLayer::new().layer(replayed_payments.service())).await?;

    let mut results: Vec<(Path, Vec<Measured>)> =
        Path::ALL.iter().map(|&p| (p, Vec::new())).collect();
    let next_key = Arc::new(AtomicU64::new(0));
    for round in 0..=args.rounds {
        // The fresh key and no key run back to back, each first in every other round, so
        // that their ratio compares the two under the same load from the rest of the machine.
        let order = if round % 2 == 1 {
            [0, 1, 2, 3]
        } else {
            [0, 2, 1, 3]
        };
        for index in order {
            let (path, measured) = &mut results[index];
            let wanted = args.paths.is_empty()
                || args.paths.iter().any(|p| {
                    path.name().contains(p.as_str()) || format!("{path:?}").eq_ignore_ascii_case(p)
                });
            if !wanted || Instant::now() > deadline {
                continue;
            }
            let url = match path {
                Path::Bare => bare.url(),
                Path::Replay => replayed.url(),
                Path::Fresh | Path::Keyless => layered.url(),
            };
            // Round 0 warms up connections, allocator and the replayed key; it is not reported.
            let requests = if round == 0 {
                args.requests / 10
            } else {
                args.requests
            };
            let m = drive(*path, &url, requests, args.concurrency, &next_key).await?;
            if round > 0 {
                measured.push(m);
            }
        }
    }
    bare.stop().await;
    layered.stop().await;
    replayed.stop().await;

    println!(
        "{:<34} {:>10} {:>9} {:>9} {:>8} {:>9} {:>9}",
        "path", "req/s", "p50 ms", "p99 ms", "vs bare", "allocs", "bytes"
    );
    let bare_rps = if results[0].1.is_empty() {
        f64::NAN
    } else {
        median_by(&results[0].1, |m| m.rps)
    };
    for (path, measured) in &results {
        if measured.is_empty() {
            continue;
        }
        let rps = median_by(measured, |m| m.rps);
        println!(
            "{:<34} {:>10.0} {:>9.3} {:>9.3} {:>7.0}% {:>9.1} {:>9.0}",
            path.name(),
            rps,
            median_by(measured, |m| m.p50.as_secs_f64()) * 1e3,
            median_by(measured, |m| m.p99.as_secs_f64()) * 1e3,
            100.0 * rps / bare_rps,
            median_by(measured, |m| m.allocations),
            median_by(measured, |m| m.bytes),
        );
    }
    println!("(allocs, bytes: heap allocations and bytes allocated per request, clients included)");
    print_fresh_vs_keyless(&results);
    println!(
        "charges: bare={} fresh+keyless={} replayed key={}",
        bare_payments.charges().await?,
        layered_payments.charges().await?,
        replayed_payments.charges().await?
    );
    Ok(())
}

/// The fresh key's rate as a share of the no-key rate, round by round (the two run back to back
/// in each round, so they share the machine's mood), and the median of the rounds.
fn print_fresh_vs_keyless(results: &[(Path, Vec<Measured>)]) {
    let of = |wanted: Path| {
        results
            .iter()
            .find(|(path, _)| *path == wanted)
            .map_or(&[][..], |(_, measured)| measured.as_slice())
    };
    let (fresh, keyless) = (of(Path::Fresh), of(Path::Keyless));
    let mut ratios: Vec<f64> = fresh
        .iter()
        .zip(keyless)
        .map(|(fresh, keyless)| 100.0 * fresh.rps / keyless.rps)
        .collect();
    if ratios.is_empty() {
        return;
    }
    let rounds: Vec<String> = ratios.iter().map(|r| format!("{r:.1}%")).collect();
    ratios.sort_by(f64::total_cmp);
    println!(
        "fresh key / no key: median {:.1}% of {} rounds; each round: {}",
        ratios[ratios.len() / 2],
        ratios.len(),
        rounds.join(", ")
    );
}

fn median_by(measured: &[Measured], value: impl Fn(&Measured) -> f64) -> f64 {
    let mut values: Vec<f64> = measured.iter().map(value).collect();
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

async fn drive(
    path: Path,
    url: &str,
    requests: u64,
    concurrency: u64,
    next_key: &Arc<AtomicU64>,
) -> Result<Measured, BoxError> {
    // Every request carries one header of the same size: the key on the keyed paths, a request
    // id the layer ignores on the others. Both are made before the clock starts, so the load's
    // own work is the same on every path and the difference is the server's.
    let values: Arc<Vec<String>> = Arc::new(
        (0..requests)
            .map(|_| match path {
                Path::Replay => "load-replayed".to_owned(),
                _ => format!("load-{}", next_key.fetch_add(1, Ordering::Relaxed)),
            })
            .collect(),
    );
    let header = match path {
        Path::Fresh | Path::Replay => "idempotency-key",
        Path::Bare | Path::Keyless => "x-request-id",
    };
    let remaining = Arc::new(AtomicU64::new(requests));
    let (allocations_before, bytes_before) = allocated();
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let client = LoopbackClient::new(url);
        let remaining = Arc::clone(&remaining);
        let values = Arc::clone(&values);
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            while let Ok(left) =
                remaining.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            {
                let value = values[(left - 1) as usize].as_str();
                let sent = Instant::now();
                let reply = client
                    .post("/payments", &[(header, value)], r#"{"amount":5}"#)
                    .await?;
                latencies.push(sent.elapsed());
                if reply.status != 201 {
                    return Err(
                        format!("unexpected status {}: {}", reply.status, reply.body).into(),
                    );
                }
            }
            Ok::<_, BoxError>(latencies)
        }));
    }
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await??);
    }
    let elapsed = started.elapsed();
    let (allocations_after, bytes_after) = allocated();
    latencies.sort_unstable();
    Ok(Measured {
        rps: requests as f64 / elapsed.as_secs_f64(),
        p50: retrykey_benches::latency_at(&latencies, 0.50),
        p99: retrykey_benches::latency_at(&latencies, 0.99),
        allocations: (allocations_after - allocations_before) as f64 / requests as f64,
        bytes: (bytes_after - bytes_before) as f64 / requests as f64,
    })
}
