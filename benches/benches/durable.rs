//! Operations per second of the durable ledgers: new operations and replays, on SQLite with two
//! durability settings and on PostgreSQL with 1 and 8 concurrent connections (when
//! RETRYKEY_PG_URL is set). Short runs: `just bench-durable` takes about a minute.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use retrykey::{Key, Ledger, Limits, Request};
use retrykey_durable::{Durability, LedgerOptions, PgLedger, SqliteLedger, pg};

const UNBOUNDED: Limits = Limits {
    max_records: usize::MAX,
    max_units: u64::MAX,
};

static NEXT: AtomicU64 = AtomicU64::new(0);

fn fresh_key() -> Key {
    Key::new(format!("bench-{}", NEXT.fetch_add(1, Ordering::Relaxed))).expect("valid key")
}

fn request() -> Request {
    Request::new("convert-document", 1).expect("valid request")
}

/// `iters` operations spread over `ledgers.len()` threads, one ledger (connection) each.
fn concurrent<L: Ledger>(ledgers: &[L], iters: u64, replay: Option<&Key>) -> Duration {
    let per_thread = iters.div_ceil(ledgers.len() as u64);
    let start = Arc::new(Barrier::new(ledgers.len() + 1));
    std::thread::scope(|scope| {
        for ledger in ledgers {
            let start = Arc::clone(&start);
            scope.spawn(move || {
                let request = request();
                start.wait();
                for _ in 0..per_thread {
                    let key = replay.cloned().unwrap_or_else(fresh_key);
                    ledger.apply(&key, &request).expect("apply");
                }
            });
        }
        start.wait();
        let began = Instant::now();
        // The scope joins every thread before returning.
        began
    })
    .elapsed()
}

fn sqlite(c: &mut Criterion) {
    let mut group = c.benchmark_group("sqlite");
    group.throughput(Throughput::Elements(1));
    for (name, durability) in [("full", Durability::Full), ("normal", Durability::Normal)] {
        let path = std::env::temp_dir().join(format!(
            "retrykey-bench-{name}-{}.sqlite",
            std::process::id()
        ));
        let options = LedgerOptions {
            limits: UNBOUNDED,
            durability,
            ..LedgerOptions::default()
        };
        let ledger = SqliteLedger::open(&path, options).expect("open");
        let request = request();
        group.bench_function(format!("new/{name}"), |b| {
            b.iter(|| ledger.apply(&fresh_key(), &request).expect("apply"));
        });
        let key = fresh_key();
        ledger.apply(&key, &request).expect("apply");
        group.bench_function(format!("replay/{name}"), |b| {
            b.iter(|| ledger.apply(&key, &request).expect("replay"));
        });
        drop(ledger);
        retrykey_durable::sqlite::remove_files(&path);
    }
    group.finish();
}

fn postgres(c: &mut Criterion) {
    let Some(url) = pg::url_from_env() else {
        eprintln!(
            "PostgreSQL not configured: skipped, set {} to enable",
            pg::URL_VAR
        );
        return;
    };
    let mut group = c.benchmark_group("postgres");
    group.throughput(Throughput::Elements(1));
    for clients in [1_usize, 8] {
        // Each connection works on its own scope, as independent accounts would.
        let ledgers: Vec<PgLedger> = (0..clients)
            .map(|client| {
                let options = LedgerOptions {
                    scope: format!("bench-{}-{clients}-{client}", std::process::id()),
                    limits: UNBOUNDED,
                    pg_schema: "retrykey_bench".to_owned(),
                    pg_connections: 1,
                    ..LedgerOptions::default()
                };
                PgLedger::open(&url, options).expect("open")
            })
            .collect();
        group.bench_function(format!("new/{clients}"), |b| {
            b.iter_custom(|iters| concurrent(&ledgers, iters, None));
        });
        let key = fresh_key();
        for ledger in &ledgers {
            ledger.apply(&key, &request()).expect("apply");
        }
        group.bench_function(format!("replay/{clients}"), |b| {
            b.iter_custom(|iters| concurrent(&ledgers, iters, Some(&key)));
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = sqlite, postgres
}
criterion_main!(benches);
