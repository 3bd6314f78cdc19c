//! New operations per second on PostgreSQL against `pgbench -N` on the same server, at the same
//! client counts, in the same run: the database's own speed is the reference.
//!
//! For each client count it runs `pgbench -N` (BEGIN, UPDATE an account, SELECT it, INSERT a
//! history row, END: a short write transaction like ours), then the same number of threads
//! applying new operations through a `PgLedger`, each on its own scope (account), as pgbench's
//! clients each touch random accounts. It also reports all threads on one scope, where new
//! operations queue on that scope's ledger row. The bench rows stay in schema `retrykey_bench`
//! (drop it when done); pgbench's tables are created in the database's default schema.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Parser;
use retrykey::{Key, Ledger, Limits, Request};
use retrykey_durable::{LedgerOptions, PgLedger, pg};
use retrykey_testkit::pgbench;

/// Compare the ledger's new operations per second with `pgbench -N`.
#[derive(Parser)]
struct Args {
    /// Client counts to measure.
    #[arg(long, value_delimiter = ',', default_value = "1,8")]
    clients: Vec<usize>,
    /// Seconds per measurement.
    #[arg(long, default_value_t = 3)]
    seconds: u64,
    /// Measurements of each kind, alternating pgbench and ledger; the best of each is kept, so
    /// a burst of other load on the machine does not decide the ratio.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let url = pg::url_from_env().with_context(|| format!("set {}", pg::URL_VAR))?;
    pgbench::prepare(&url)?;
    println!(
        "{:>7} {:>14} {:>16} {:>8} {:>18}",
        "clients", "pgbench -N tps", "ledger new op/s", "ratio", "one scope op/s"
    );
    for &clients in &args.clients {
        let (mut reference, mut ledger, mut one_scope) = (0.0_f64, 0.0_f64, 0.0_f64);
        for _ in 0..args.rounds.max(1) {
            reference = reference.max(pgbench::tps(&url, "-N", clients, args.seconds)?);
            ledger = ledger.max(ledger_rate(&url, clients, args.seconds, false)?);
            one_scope = one_scope.max(ledger_rate(&url, clients, args.seconds, true)?);
        }
        println!(
            // One decimal: a goal of 80% is not met by 79.8%.
            "{clients:>7} {reference:>14.0} {ledger:>16.0} {:>7.1}% {one_scope:>18.0}",
            100.0 * ledger / reference
        );
    }
    Ok(())
}

/// New operations per second from `clients` threads, each with its own connection.
fn ledger_rate(url: &str, clients: usize, seconds: u64, one_scope: bool) -> anyhow::Result<f64> {
    let limits = Limits {
        max_records: usize::MAX,
        max_units: u64::MAX,
    };
    static ROUND: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = (
        std::process::id(),
        ROUND.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
    );
    let ledgers = (0..clients)
        .map(|client| {
            let scope = if one_scope {
                format!("bench-{}-{}-{clients}-shared", run.0, run.1)
            } else {
                format!("bench-{}-{}-{clients}-{client}", run.0, run.1)
            };
            let options = LedgerOptions {
                scope,
                limits,
                pg_schema: "retrykey_bench".to_owned(),
                pg_connections: 1,
                pg_application_name: "retrykey-bench".to_owned(),
                ..LedgerOptions::default()
            };
            PgLedger::open(url, options).context("open the ledger")
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let request = Request::new("convert-document", 1)?;
    let start = Arc::new(Barrier::new(clients));
    let applied: usize = std::thread::scope(|scope| {
        let workers: Vec<_> = ledgers
            .iter()
            .enumerate()
            .map(|(client, ledger)| {
                let (start, request) = (Arc::clone(&start), &request);
                scope.spawn(move || {
                    start.wait();
                    let deadline = Instant::now() + Duration::from_secs(seconds);
                    let mut applied = 0;
                    while Instant::now() < deadline {
                        let key =
                            Key::new(format!("{one_scope}-{client}-{applied}")).expect("valid key");
                        ledger.apply(&key, request).expect("apply");
                        applied += 1;
                    }
                    applied
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().expect("worker"))
            .sum()
    });
    Ok(applied as f64 / seconds as f64)
}
