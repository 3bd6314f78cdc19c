//! The layer's stores under loopback load, against PostgreSQL's own speed measured in the same
//! run: PostgreSQL (`PgEntries`, `PgPayments`), SQLite (`SqliteEntries`, `SqlitePayments`, a temporary file)
//! and memory for reference, each behind the layer in front of `Payments::with_ledger`, served
//! over real HTTP with keep-alive clients.
//!
//! Per store it measures a fresh key per request (lookup, claim, the charge and the answer in
//! one transaction, completion) and the replay of one stored key (one lookup). Between rounds
//! it runs `pgbench -N` (a short write transaction) and `pgbench -S` (one indexed read) with as
//! many clients on the same server, and prints each path's ratio to the matching figure: fresh
//! key to `-N`, replay to `-S`. Then what one stored response costs in memory or on disk.
//!
//! Bounded: fixed request counts, a few rounds (the median is reported), and a hard time cap.
//! Without `RETRYKEY_PG_URL` the PostgreSQL parts are skipped and named.
//!
//! `cargo run --release -p retrykey-benches --bin store-load -- [--rounds R] [--concurrency C] [--stores postgres,sqlite,memory]`

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use clap::Parser;
use http::{Method, Uri};
use retrykey_http::payments::{MemoryPayments, PaymentLedger, Payments, created};
use retrykey_http::{
    Entries, EntryId, Fingerprint, IdempotencyKey, IdempotencyLayer, MemoryEntries, Reserve, Scope,
    StoreLimits,
};
use retrykey_replicas::{PgEntries, PgPayments, SqliteEntries, SqlitePayments, StoreOptions};
use retrykey_server::loopback::{LoopbackClient, Server};
use retrykey_testkit::pgbench;
use tower_layer::Layer;

const URL_VAR: &str = "RETRYKEY_PG_URL";
const BODY: &str = r#"{"amount":5}"#;

#[derive(Debug, Parser)]
struct Args {
    /// Fresh-key requests per round through PostgreSQL.
    #[arg(long, default_value_t = 4000)]
    pg_requests: u64,
    /// Fresh-key requests per round through SQLite (each commits twice, waiting for the disk).
    #[arg(long, default_value_t = 1000)]
    sqlite_requests: u64,
    /// Replays per round through each database store.
    #[arg(long, default_value_t = 20_000)]
    replay_requests: u64,
    /// Requests per round for each memory-store path (it is far faster).
    #[arg(long, default_value_t = 20_000)]
    memory_requests: u64,
    /// Concurrent clients, each on its own keep-alive connection; also pgbench's clients.
    #[arg(long, default_value_t = 8)]
    concurrency: u64,
    /// Measured rounds, after one warm-up round of a tenth of the requests; each runs every
    /// path and both pgbench modes once, and the median round is reported.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Seconds per pgbench run.
    #[arg(long, default_value_t = 3)]
    pgbench_seconds: u64,
    /// Responses stored in a memory store to measure its resident memory per response.
    #[arg(long, default_value_t = 50_000)]
    stored: u64,
    /// Only these stores (comma-separated: postgres, sqlite, memory); default all.
    #[arg(long, value_delimiter = ',')]
    stores: Vec<String>,
    /// Give up (and report what was measured) after this many seconds.
    #[arg(long, default_value_t = 240)]
    max_seconds: u64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Path {
    Fresh,
    Replay,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Postgres,
    Sqlite,
    Memory,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Postgres => "PostgreSQL",
            Kind::Sqlite => "SQLite",
            Kind::Memory => "memory",
        }
    }

    /// As `--stores` names it.
    fn flag(self) -> &'static str {
        match self {
            Kind::Postgres => "postgres",
            Kind::Sqlite => "sqlite",
            Kind::Memory => "memory",
        }
    }
}

struct Target {
    kind: Kind,
    server: Server,
    payments: Arc<Payments>,
    fresh_requests: u64,
    replay_requests: u64,
    /// Per path: every measured round.
    fresh: Vec<Measured>,
    replay: Vec<Measured>,
    /// Fresh-key requests sent, warm-up included (each must charge once).
    fresh_sent: u64,
}

struct Measured {
    tps: f64,
    p50: Duration,
    p99: Duration,
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let started = Instant::now();
    let deadline = started + Duration::from_secs(args.max_seconds);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "store-load: {} clients on keep-alive loopback HTTP; per round {} fresh keys through \
         PostgreSQL, {} through SQLite, {} replays through each, {} per memory path; {} rounds \
         after a warm-up, median round; pgbench {} s per mode per round; {} cores",
        args.concurrency,
        args.pg_requests,
        args.sqlite_requests,
        args.replay_requests,
        args.memory_requests,
        args.rounds,
        args.pgbench_seconds,
        cores
    );
    // Big enough that no run is refused for room: every key of the run stays stored (the
    // default 24-hour retention), and the stores would answer 507 rather than forget one.
    let limits = StoreLimits {
        max_entries: 10_000_000,
        max_bytes: 1 << 40,
        ..StoreLimits::default()
    };
    let options = StoreOptions {
        limits,
        ..StoreOptions::default()
    };

    // First, before any load has grown and fragmented the heap.
    memory_footprint(args.stored, limits).await?;

    let wanted = |kind: Kind| {
        args.stores.is_empty()
            || args
                .stores
                .iter()
                .any(|s| kind.flag().eq_ignore_ascii_case(s))
    };
    let url = std::env::var(URL_VAR).ok().filter(|url| !url.is_empty());
    let mut pg_store = None;
    let mut targets = Vec::new();
    match &url {
        _ if !wanted(Kind::Postgres) => {}
        Some(url) => {
            let store = PgEntries::throwaway(url, options.clone())
                .await
                .context("open the PostgreSQL store")?;
            let ledger: Arc<dyn PaymentLedger> = Arc::new(PgPayments::new(&store));
            let layer = IdempotencyLayer::builder().store(store.clone()).build();
            let counts = (args.pg_requests, args.replay_requests);
            targets.push(target(Kind::Postgres, layer, ledger, counts).await?);
            pg_store = Some(store);
        }
        None => println!("PostgreSQL and pgbench: skipped ({URL_VAR} is not set)"),
    }
    let mut sqlite = None;
    if wanted(Kind::Sqlite) {
        let store = SqliteEntries::throwaway(options.clone()).context("open the SQLite store")?;
        let ledger: Arc<dyn PaymentLedger> = Arc::new(SqlitePayments::new(&store));
        let layer = IdempotencyLayer::builder().store(store.clone()).build();
        let counts = (args.sqlite_requests, args.replay_requests);
        targets.push(target(Kind::Sqlite, layer, ledger, counts).await?);
        sqlite = Some(store);
    }
    if wanted(Kind::Memory) {
        let layer = IdempotencyLayer::builder()
            .store(MemoryEntries::new(limits))
            .build();
        let ledger: Arc<dyn PaymentLedger> = Arc::new(MemoryPayments::default());
        let counts = (args.memory_requests, args.memory_requests);
        targets.push(target(Kind::Memory, layer, ledger, counts).await?);
    }

    let pgbench_ready = match pg_store.as_ref().and(url.as_deref()) {
        Some(url) => match prepare_pgbench(url).await {
            Ok(scale) => {
                println!("pgbench: scale {scale} in the database's default schema");
                true
            }
            Err(error) => {
                println!("pgbench: skipped ({error:#})");
                false
            }
        },
        None => false,
    };
    let (mut pgbench_n, mut pgbench_s, mut pgbench_two) = (Vec::new(), Vec::new(), Vec::new());
    // The shape of a fresh key's database work, in pgbench's own tables: one commit that
    // inserts a row, then one that updates a row and inserts another.
    let script =
        std::env::temp_dir().join(format!("retrykey-two-commits-{}.sql", std::process::id()));
    std::fs::write(&script, TWO_COMMITS).context("pgbench's script")?;
    let two_commits = format!("-f{}", script.display());
    let next_key = Arc::new(AtomicU64::new(0));
    let mut capped = false;
    'rounds: for round in 0..=args.rounds {
        for target in &mut targets {
            for path in [Path::Fresh, Path::Replay] {
                let requests = match path {
                    Path::Fresh => target.fresh_requests,
                    Path::Replay => target.replay_requests,
                };
                // Round 0 warms up connections, prepared statements and caches; not reported.
                let requests = if round == 0 {
                    (requests / 10).max(1)
                } else {
                    requests
                };
                let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                    capped = true;
                    break 'rounds;
                };
                let prefix = format!("{}-", target.kind.name());
                let base = target.server.url();
                let driven = drive(path, &base, &prefix, requests, args.concurrency, &next_key);
                let Ok(measured) = tokio::time::timeout(left, driven).await else {
                    capped = true;
                    break 'rounds;
                };
                let measured =
                    measured.with_context(|| format!("{} {path:?}", target.kind.name()))?;
                if path == Path::Fresh {
                    target.fresh_sent += requests;
                }
                if round > 0 {
                    match path {
                        Path::Fresh => target.fresh.push(measured),
                        Path::Replay => target.replay.push(measured),
                    }
                }
            }
        }
        if let (Some(url), true, true) = (&url, pgbench_ready, round > 0) {
            for (mode, figures) in [
                ("-N", &mut pgbench_n),
                ("-S", &mut pgbench_s),
                (two_commits.as_str(), &mut pgbench_two),
            ] {
                if Instant::now() + Duration::from_secs(args.pgbench_seconds + 5) > deadline {
                    capped = true;
                    break 'rounds;
                }
                figures.push(pgbench_tps(url, mode, args.concurrency, args.pgbench_seconds).await?);
            }
        }
    }
    if capped {
        println!(
            "time cap of {} s reached: what follows is what was measured by then",
            args.max_seconds
        );
    }

    let n = median(&pgbench_n);
    let s = median(&pgbench_s);
    let two = median(&pgbench_two);
    println!();
    println!(
        "{:<38} {:>8} {:>8} {:>8} {:>12} {:>7}",
        "path", "tps", "p50 ms", "p99 ms", "reference", "ratio"
    );
    for target in &targets {
        for (path, measured, reference, against) in [
            (Path::Fresh, &target.fresh, n, "pgbench -N"),
            (Path::Replay, &target.replay, s, "pgbench -S"),
        ] {
            if measured.is_empty() {
                continue;
            }
            let tps = median_by(measured, |m| m.tps);
            let what = match path {
                Path::Fresh => "fresh key per request",
                Path::Replay => "replay of one stored key",
            };
            println!(
                "{:<38} {:>8.0} {:>8.2} {:>8.2} {:>12} {:>6.1}%",
                format!("{}, {what}", target.kind.name()),
                tps,
                median_by(measured, |m| m.p50.as_secs_f64()) * 1e3,
                median_by(measured, |m| m.p99.as_secs_f64()) * 1e3,
                against,
                100.0 * tps / reference
            );
        }
    }
    if !pgbench_n.is_empty() {
        println!(
            "{:<38} {:>8.0}   (runs: {})",
            format!("pgbench -N, {} clients", args.concurrency),
            n,
            listed(&pgbench_n)
        );
    }
    if !pgbench_s.is_empty() {
        println!(
            "{:<38} {:>8.0}   (runs: {})",
            format!("pgbench -S, {} clients", args.concurrency),
            s,
            listed(&pgbench_s)
        );
    }
    if !pgbench_two.is_empty() {
        println!(
            "{:<38} {:>8.0}   (runs: {}; {:.1}% of -N)",
            format!("pgbench, two commits, {}", args.concurrency),
            two,
            listed(&pgbench_two),
            100.0 * two / n
        );
        if let Some(pg) = targets.iter().find(|t| t.kind == Kind::Postgres)
            && !pg.fresh.is_empty()
        {
            println!(
                "PostgreSQL floor: a fresh key commits twice (the claim, then the charge with \
                 its answer); pgbench with two commits per transaction runs at {:.1}% of -N, \
                 and the fresh key at {:.1}% of it",
                100.0 * two / n,
                100.0 * median_by(&pg.fresh, |m| m.tps) / two
            );
        }
    }
    if let Some(pg) = targets.iter().find(|t| t.kind == Kind::Postgres)
        && !pgbench_n.is_empty()
        && !pg.fresh.is_empty()
    {
        for (what, goal, measured, reference) in [
            (
                "fresh key through PgEntries >= 70% of pgbench -N",
                70.0,
                &pg.fresh,
                n,
            ),
            (
                "replay through PgEntries >= 50% of pgbench -S",
                50.0,
                &pg.replay,
                s,
            ),
        ] {
            let ratio = 100.0 * median_by(measured, |m| m.tps) / reference;
            let verdict = if ratio >= goal { "met" } else { "missed" };
            println!("goal: {what}: {verdict} ({ratio:.1}%)");
        }
    }
    if let Some(sqlite) = targets.iter().find(|t| t.kind == Kind::Sqlite)
        && !sqlite.fresh.is_empty()
    {
        // The disk's own limit: a fresh key commits twice, one writer at a time, and each
        // commit waits for the disk.
        let floor = sqlite_commits_per_s(SQLITE_FLOOR_COMMITS)?;
        let fresh = median_by(&sqlite.fresh, |m| m.tps);
        println!(
            "SQLite floor: {floor:.0} commits/s, one writer, synchronous = FULL ({} commits of \
             one row); two per fresh key: at most {:.0} requests/s; fresh key at {:.1}% of it",
            SQLITE_FLOOR_COMMITS,
            floor / 2.0,
            200.0 * fresh / floor
        );
        if !pgbench_n.is_empty() {
            let ratio = 100.0 * fresh / n;
            let verdict = if ratio >= 40.0 { "met" } else { "missed" };
            println!(
                "goal: fresh key through SqliteEntries >= 40% of pgbench -N: {verdict} \
                 ({ratio:.1}%; the floor allows {:.1}%)",
                50.0 * floor / n
            );
        }
    }

    println!();
    for target in &targets {
        // The replayed key charged once, before round 0.
        println!(
            "charges, {}: {} (expected {})",
            target.kind.name(),
            target.payments.charges().await?,
            target.fresh_sent + 1
        );
    }
    if let (Some(url), Some(store)) = (&url, &pg_store) {
        pg_footprint(url, store.schema()).await?;
    }
    if let Some(store) = &sqlite {
        sqlite_footprint(store.path())?;
    }

    for target in targets {
        target.server.stop().await;
    }
    // Throwaways: the schema is dropped, and the file removed, with the last clone.
    drop(pg_store);
    if let Some(store) = sqlite {
        let path = store.path().to_path_buf();
        drop(store);
        println!("SQLite file {} removed: {}", path.display(), !path.exists());
    }
    let _ = std::fs::remove_file(&script);
    println!("done in {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// A server with `layer` in front of a payments handler charging into `ledger`, and one key
/// stored in it for the replay path.
async fn target(
    kind: Kind,
    layer: IdempotencyLayer,
    ledger: Arc<dyn PaymentLedger>,
    (fresh_requests, replay_requests): (u64, u64),
) -> anyhow::Result<Target> {
    let payments = Payments::with_ledger(Duration::ZERO, ledger);
    let server = Server::start(layer.layer(payments.service())).await?;
    let reply = LoopbackClient::new(server.url())
        .post("/payments", &[("idempotency-key", "replayed")], BODY)
        .await
        .map_err(|error| anyhow!("{}: {error}", kind.name()))?;
    if reply.status != 201 {
        bail!(
            "{}: storing the replayed key: {}",
            kind.name(),
            reply.status
        );
    }
    Ok(Target {
        kind,
        server,
        payments,
        fresh_requests,
        replay_requests,
        fresh: Vec::new(),
        replay: Vec::new(),
        fresh_sent: 0,
    })
}

async fn drive(
    path: Path,
    url: &str,
    prefix: &str,
    requests: u64,
    concurrency: u64,
    next_key: &Arc<AtomicU64>,
) -> anyhow::Result<Measured> {
    let remaining = Arc::new(AtomicU64::new(requests));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let client = LoopbackClient::new(url);
        let remaining = Arc::clone(&remaining);
        let next_key = Arc::clone(next_key);
        let prefix = prefix.to_owned();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            while remaining
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
            {
                let key = match path {
                    Path::Fresh => format!("{prefix}{}", next_key.fetch_add(1, Ordering::Relaxed)),
                    Path::Replay => "replayed".to_owned(),
                };
                let sent = Instant::now();
                let reply = client
                    .post("/payments", &[("idempotency-key", key.as_str())], BODY)
                    .await
                    .map_err(|error| anyhow!("{error}"))?;
                latencies.push(sent.elapsed());
                if reply.status != 201 || reply.replayed() != (path == Path::Replay) {
                    bail!("unexpected answer {}: {}", reply.status, reply.body);
                }
            }
            Ok(latencies)
        }));
    }
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await??);
    }
    let elapsed = started.elapsed();
    latencies.sort_unstable();
    let at = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    Ok(Measured {
        tps: requests as f64 / elapsed.as_secs_f64(),
        p50: at(0.50),
        p99: at(0.99),
    })
}

/// Resident memory grown per response stored in a memory store, with the payments answer.
async fn memory_footprint(stored: u64, limits: StoreLimits) -> anyhow::Result<()> {
    let store = MemoryEntries::new(limits);
    let uri = Uri::from_static("/payments");
    let fingerprint = Fingerprint::of(
        &Method::POST,
        &uri,
        &Scope::Anonymous,
        Some("application/json"),
        BODY.as_bytes(),
    );
    let answer_size = created(1_000_000).size();
    let before = retrykey_testkit::load::resident_bytes(std::process::id())?;
    for n in 0..stored {
        let key = IdempotencyKey::parse(format!("stored-{n}").as_bytes())
            .map_err(|problem| anyhow!("{problem:?}"))?;
        let id = EntryId::new(&Scope::Anonymous, &key);
        let Reserve::Reserved(token) = store.reserve(&id, &fingerprint).await? else {
            bail!("the memory store refused key {n}");
        };
        store.complete(&id, token, created(n + 1)).await?;
    }
    let after = retrykey_testkit::load::resident_bytes(std::process::id())?;
    let grown = after.saturating_sub(before);
    println!(
        "memory store: {} responses stored (the payments answer, {} bytes): \
         VmRSS {} -> {} KiB, {:.0} bytes per stored response",
        store.len(),
        answer_size,
        before / 1024,
        after / 1024,
        grown as f64 / stored.max(1) as f64
    );
    Ok(())
}

/// The keys table's size on disk, indexes and TOAST included, per row.
async fn pg_footprint(url: &str, schema: &str) -> anyhow::Result<()> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
    tokio::spawn(connection);
    let table = format!("{schema}.http_keys");
    let row = client
        .query_one(
            &format!(
                "SELECT pg_total_relation_size($1::text::regclass),
                        pg_relation_size($1::text::regclass),
                        (SELECT count(*) FROM {table})"
            ),
            &[&table],
        )
        .await?;
    let (total, heap, rows): (i64, i64, i64) = (row.get(0), row.get(1), row.get(2));
    println!(
        "PostgreSQL keys table: {rows} rows, {} KiB with indexes ({} KiB heap): {:.0} bytes per \
         stored response ({:.0} heap only)",
        total / 1024,
        heap / 1024,
        total as f64 / rows.max(1) as f64,
        heap as f64 / rows.max(1) as f64
    );
    Ok(())
}

/// A pgbench script of two transactions, each with its own commit.
const TWO_COMMITS: &str = "\\set aid random(1, 100000 * :scale)
\\set delta random(-5000, 5000)
BEGIN;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, :aid, :delta, CURRENT_TIMESTAMP);
END;
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, :aid, :delta, CURRENT_TIMESTAMP);
END;
";

/// Single-row commits to measure the SQLite floor with.
const SQLITE_FLOOR_COMMITS: u32 = 1000;

/// Commits per second of one writer in a scratch file with the store's settings (WAL,
/// `synchronous = FULL`), each `BEGIN IMMEDIATE`, one insert, `COMMIT`: the rate the disk
/// allows a writer, with nothing else in the way.
fn sqlite_commits_per_s(commits: u32) -> anyhow::Result<f64> {
    let path = std::env::temp_dir().join(format!("retrykey-floor-{}.sqlite", std::process::id()));
    let measured = (|| -> anyhow::Result<f64> {
        let mut conn = rusqlite::Connection::open(&path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.execute_batch("CREATE TABLE rows (id INTEGER PRIMARY KEY, body BLOB NOT NULL)")?;
        let body = vec![7u8; 200];
        let started = Instant::now();
        for id in 0..commits {
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            tx.execute(
                "INSERT INTO rows (id, body) VALUES (?1, ?2)",
                rusqlite::params![id, body],
            )?;
            tx.commit()?;
        }
        Ok(f64::from(commits) / started.elapsed().as_secs_f64())
    })();
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    measured
}

/// The SQLite file's size per stored response, after moving the log into the file.
fn sqlite_footprint(path: &std::path::Path) -> anyhow::Result<()> {
    let conn = rusqlite::Connection::open(path)?;
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    let rows: i64 = conn.query_row("SELECT count(*) FROM http_keys", [], |row| row.get(0))?;
    let file = std::fs::metadata(path)?.len();
    // The keys table and its index alone, where SQLite was built with the dbstat table.
    let keys: Option<i64> = conn
        .query_row(
            "SELECT sum(pgsize) FROM dbstat WHERE name IN ('http_keys', 'http_keys_expiry')",
            [],
            |row| row.get(0),
        )
        .ok();
    let keys = keys.map_or(String::new(), |bytes| {
        format!(
            " ({:.0} for the keys table and its index)",
            bytes as f64 / rows.max(1) as f64
        )
    });
    println!(
        "SQLite file: {rows} rows, {} KiB (payments table included): {:.0} bytes per stored \
         response{keys}",
        file / 1024,
        file as f64 / rows.max(1) as f64
    );
    Ok(())
}

/// Initialises pgbench's tables (scale 1) unless they are there; returns the scale found.
async fn prepare_pgbench(url: &str) -> anyhow::Result<i64> {
    let url = url.to_owned();
    tokio::task::spawn_blocking(move || pgbench::prepare(&url)).await?
}

/// `pgbench <mode>` transactions per second (excluding connection set-up).
async fn pgbench_tps(url: &str, mode: &str, clients: u64, seconds: u64) -> anyhow::Result<f64> {
    let (url, mode) = (url.to_owned(), mode.to_owned());
    tokio::task::spawn_blocking(move || pgbench::tps(&url, &mode, clients as usize, seconds))
        .await?
}

fn median(values: &[f64]) -> f64 {
    let mut values = values.to_vec();
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn median_by(measured: &[Measured], value: impl Fn(&Measured) -> f64) -> f64 {
    median(&measured.iter().map(value).collect::<Vec<_>>())
}

fn listed(values: &[f64]) -> String {
    values
        .iter()
        .map(|v| format!("{v:.0}"))
        .collect::<Vec<_>>()
        .join(", ")
}
