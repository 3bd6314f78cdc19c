//! A flood of fresh keys into a `payments` server whose store is bounded: every key distinct,
//! every body 1 KiB, sent over loopback until all are answered. It checks that the bound holds
//! and costs nothing it should not:
//!
//! - every answer is a 201 or a 503 `store-full` with `Retry-After`, and the charges the server
//!   reports equal the 201s;
//! - afterwards every accepted key still replays its own payment: no live record was evicted;
//! - the server's resident memory (`VmRSS` of its process) grew by at most the store's byte
//!   bound plus `--overhead-mib`; with a database store, the keys table holds at most its bound.
//!
//! It prints the figures and exits 1 if any check fails. Bounded: a fixed number of keys and a
//! hard time cap (`--max-seconds`); the server is stopped by its own process id at the end.
//!
//! `just flood [--store sqlite] [--keys N] [--max-bytes N] ...`

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use anyhow::{anyhow, bail, ensure};
use clap::{Parser, ValueEnum};
use retrykey_server::loopback::LoopbackClient;
use retrykey_testkit::load::PaymentsProcess;

#[derive(Debug, Parser)]
struct Args {
    /// The `payments` binary to flood (built with it by `just flood`).
    #[arg(long, value_name = "PATH")]
    payments: PathBuf,
    /// Which store the server keeps its keys in (sqlite: a temporary file, removed after).
    #[arg(long, value_enum, default_value = "memory")]
    store: Store,
    /// Distinct keys sent.
    #[arg(long, default_value_t = 100_000)]
    keys: u64,
    /// Bytes in each request body (a payment padded with a memo).
    #[arg(long, default_value_t = 1024)]
    body_bytes: usize,
    /// The store's byte bound (`payments --max-bytes`); its entry bound is set far above it.
    #[arg(long, default_value_t = 64 << 20)]
    max_bytes: u64,
    /// Memory the server may grow by beyond the byte bound: its runtime, connection buffers and
    /// the allocator's slack.
    #[arg(long, default_value_t = 32)]
    overhead_mib: u64,
    /// Concurrent clients, each on its own keep-alive connection.
    #[arg(long, default_value_t = 32)]
    concurrency: u64,
    /// Give up (and fail) after this many seconds.
    #[arg(long, default_value_t = 600)]
    max_seconds: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Store {
    Memory,
    Sqlite,
}

/// What the flood saw.
#[derive(Debug, Default)]
struct Tally {
    created: AtomicU64,
    refused: AtomicU64,
    /// Answers that were neither: each one fails the run.
    unexpected: AtomicU64,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    ensure!(
        args.keys > 0 && args.concurrency > 0,
        "--keys and --concurrency must be above zero"
    );
    retrykey_testkit::load::run_within(args.max_seconds, flood(&args))
}

async fn flood(args: &Args) -> anyhow::Result<()> {
    let file = std::env::temp_dir().join(format!("retrykey-flood-{}.sqlite", std::process::id()));
    let store = match args.store {
        Store::Memory => "memory".to_owned(),
        Store::Sqlite => format!("sqlite:{}", file.display()),
    };
    let bounds = [
        "--store".to_owned(),
        store.clone(),
        "--max-bytes".to_owned(),
        args.max_bytes.to_string(),
        "--max-entries".to_owned(),
        "100000000".to_owned(),
    ];
    let server = PaymentsProcess::start(&args.payments, &bounds)?;
    let client = LoopbackClient::new(server.url.clone());
    let body = padded_body(args.body_bytes);
    // One warm-up payment, so that the baseline includes the runtime and a connection.
    let warm = client
        .post("/payments", &[("idempotency-key", "warm-up")], body.clone())
        .await;
    ensure!(
        warm.map(|r| r.status).ok() == Some(201),
        "the warm-up payment failed"
    );
    let before = server.resident_bytes()?;

    let started = Instant::now();
    let tally = Arc::new(Tally::default());
    let next = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = (0..args.concurrency)
        .map(|_| {
            let (client, body, tally, next) = (
                client.clone(),
                body.clone(),
                Arc::clone(&tally),
                Arc::clone(&next),
            );
            let keys = args.keys;
            tokio::spawn(async move {
                let mut accepted = Vec::new();
                loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    if n >= keys {
                        return accepted;
                    }
                    let key = format!("flood-{n}");
                    let reply = client
                        .post("/payments", &[("idempotency-key", &key)], body.clone())
                        .await;
                    match reply {
                        Ok(reply) if reply.status == 201 => {
                            tally.created.fetch_add(1, Ordering::Relaxed);
                            accepted.push((key, reply.body));
                        }
                        Ok(reply)
                            if reply.status == 503
                                && reply.header("retry-after").is_some()
                                && reply.body.contains("problem:store-full") =>
                        {
                            tally.refused.fetch_add(1, Ordering::Relaxed);
                        }
                        _ => {
                            tally.unexpected.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            })
        })
        .collect();
    let mut accepted = Vec::new();
    for worker in workers {
        accepted.extend(worker.await?);
    }
    let flood_time = started.elapsed();
    let after = server.resident_bytes()?;

    // Every accepted key replays its own payment: nothing live was evicted to make room.
    let mut evicted = 0_u64;
    for (key, first) in &accepted {
        let replay = client
            .post("/payments", &[("idempotency-key", key)], body.clone())
            .await
            .map_err(|error| anyhow!(error))?;
        if !(replay.status == 201 && replay.replayed() && &replay.body == first) {
            evicted += 1;
        }
    }
    let charges = retrykey_testkit::load::charges(&server.url).await?;
    let rows = match args.store {
        Store::Memory => None,
        Store::Sqlite => Some(key_rows(&file)?),
    };
    drop(server);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }

    let created = tally.created.load(Ordering::Relaxed);
    let refused = tally.refused.load(Ordering::Relaxed);
    let unexpected = tally.unexpected.load(Ordering::Relaxed);
    let growth = after.saturating_sub(before);
    let allowed = args.max_bytes + (args.overhead_mib << 20);
    let mib = |bytes: u64| bytes as f64 / f64::from(1 << 20);
    println!(
        "flood: {} keys of {} bytes into a {} store bounded at {:.0} MiB, {} clients",
        args.keys,
        args.body_bytes,
        store_name(args.store),
        mib(args.max_bytes),
        args.concurrency
    );
    println!(
        "  answered in {:.1} s ({:.0} requests/s)",
        flood_time.as_secs_f64(),
        args.keys as f64 / flood_time.as_secs_f64()
    );
    println!(
        "  201 created: {created}; 503 store-full with Retry-After: {refused}; other: {unexpected}"
    );
    println!("  charges reported: {charges} (the warm-up and {created} flood payments)");
    println!(
        "  accepted keys replayed afterwards: {}; not replayed as stored: {evicted}",
        accepted.len()
    );
    println!(
        "  server VmRSS {:.1} -> {:.1} MiB: grew {:.1} MiB, allowed {:.1} MiB (bound {:.0} + overhead {})",
        mib(before),
        mib(after),
        mib(growth),
        mib(allowed),
        mib(args.max_bytes),
        args.overhead_mib
    );
    // A claim checks the bound before its answer is counted: the claims in flight when it was
    // reached (one per client) may each add one answer beyond it.
    let table_allowed = args.max_bytes + args.concurrency * 1024;
    let table_over = rows.is_some_and(|(_, bytes)| bytes > table_allowed);
    if let Some((rows, bytes)) = rows {
        println!(
            "  keys table after the flood: {rows} rows counting {:.2} MiB of answers, allowed {:.2} MiB",
            mib(bytes),
            mib(table_allowed)
        );
    }
    if unexpected > 0 || evicted > 0 || charges != created + 1 || growth > allowed || table_over {
        bail!("the flood broke a bound: see the figures above");
    }
    Ok(())
}

/// `{"amount":5,"memo":"xxx..."}` of exactly `bytes` bytes (or the bare payment if shorter).
fn padded_body(bytes: usize) -> String {
    let bare = r#"{"amount":5,"memo":""}"#;
    let memo = "x".repeat(bytes.saturating_sub(bare.len()));
    format!(r#"{{"amount":5,"memo":"{memo}"}}"#)
}

/// Rows in the SQLite store's keys table, and the bytes of answers they count.
fn key_rows(file: &std::path::Path) -> anyhow::Result<(u64, u64)> {
    let db = rusqlite::Connection::open(file)?;
    let (rows, bytes): (i64, i64) = db.query_row(
        "SELECT count(*), coalesce(sum(size), 0) FROM http_keys",
        [],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    Ok((rows.unsigned_abs(), bytes.unsigned_abs()))
}

fn store_name(store: Store) -> &'static str {
    match store {
        Store::Memory => "memory",
        Store::Sqlite => "SQLite",
    }
}
