//! The layer's stores under loopback load, each held to its database's floor measured in the
//! same run: PostgreSQL (`PgEntries`, `PgPayments`), SQLite (`SqliteEntries`, `SqlitePayments`,
//! a temporary file) and memory for reference, each behind the layer in front of
//! `Payments::with_ledger`, served over real HTTP with keep-alive clients.
//!
//! Per store it measures a fresh key per request (lookup, claim, the charge and the answer in
//! one transaction, completion) and the replay of one stored key (one lookup). The floor of a
//! fresh key is the same shape of work done by the database alone: on PostgreSQL, pgbench
//! running a script of two transactions, each with its commit, as many clients; on SQLite, half
//! the single-row commits per second that as many writers make taking turns (a fresh key
//! commits twice). The SQLite store shares one commit among the writes that wait, so it can
//! pass that floor: its ratio is the gain of sharing a commit, and its commits per fresh key
//! are printed beside it. The replay is held to `pgbench -S` on PostgreSQL only. Each round
//! runs every path right beside its floor (and `pgbench -N`), so a round's ratio compares
//! figures taken under the same outside load; the median of the rounds is reported, with
//! every round's ratio as the spread. Then what one stored response costs in memory or on
//! disk.
//!
//! Bounded: fixed request counts, five rounds by default, and a hard time cap. Without
//! `RETRYKEY_PG_URL` the PostgreSQL parts are skipped and named.
//!
//! `cargo run --release -p retrykey-benches --bin store-load -- [--rounds R] [--concurrency C] [--stores postgres,sqlite,memory]`

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
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
    /// path once, each beside its floor (pgbench, or SQLite's single-row commits), and the
    /// median of the rounds' ratios is reported with every round's.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Seconds of each pgbench mode per round, split over its slices (at least one second each).
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
    /// The SQLite store, for its count of commits.
    counter: Option<SqliteEntries>,
    /// Per measured round, commits per fresh key (SQLite only).
    commits_per_key: Vec<f64>,
}

impl Target {
    /// The commits its store has made so far, where it counts them.
    fn commits(&self) -> Option<u64> {
        self.counter.as_ref().map(SqliteEntries::commits)
    }
}

/// The baselines, one figure per measured round.
#[derive(Default)]
struct Floors {
    /// pgbench with a fresh key's two transactions per transaction, tps.
    two_commits: Vec<f64>,
    pgbench_n: Vec<f64>,
    pgbench_s: Vec<f64>,
    /// Single-row commits per second of the SQLite floor's writers, taking turns.
    sqlite_commits: Vec<f64>,
}

struct Measured {
    tps: f64,
    p50: Duration,
    p99: Duration,
}

impl Measured {
    /// A round's figures over its slices.
    fn of(slices: &[Driven]) -> Self {
        let requests: u64 = slices.iter().map(|s| s.requests).sum();
        let elapsed: Duration = slices.iter().map(|s| s.elapsed).sum();
        let mut latencies: Vec<Duration> = slices
            .iter()
            .flat_map(|s| s.latencies.iter().copied())
            .collect();
        latencies.sort_unstable();
        Self {
            tps: requests as f64 / elapsed.as_secs_f64(),
            p50: retrykey_benches::latency_at(&latencies, 0.50),
            p99: retrykey_benches::latency_at(&latencies, 0.99),
        }
    }
}

/// One slice of requests: how many, how long they took together, and each one's latency.
struct Driven {
    requests: u64,
    elapsed: Duration,
    latencies: Vec<Duration>,
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let started = Instant::now();
    print_header(&args);
    // Big enough that no run is refused for room: every key of the run stays stored (the
    // default 24-hour retention), and the stores would answer 507 rather than forget one.
    let limits = StoreLimits {
        max_entries: 10_000_000,
        max_bytes: 1 << 40,
        ..StoreLimits::default()
    };
    // First, before any load has grown and fragmented the heap.
    memory_footprint(args.stored, limits).await?;

    let url = std::env::var(URL_VAR).ok().filter(|url| !url.is_empty());
    let mut stores = open_stores(&args, url.as_deref(), limits).await?;
    let script =
        std::env::temp_dir().join(format!("retrykey-two-commits-{}.sql", std::process::id()));
    let mut rounds = Rounds {
        args: &args,
        url: url.as_deref(),
        two_commits: None,
        sqlite_floor: None,
        next_key: Arc::new(AtomicU64::new(0)),
        deadline: started + Duration::from_secs(args.max_seconds),
        floors: Floors::default(),
    };
    if let (Some(url), Some(_)) = (url.as_deref(), &stores.pg) {
        rounds.two_commits = ready_pgbench(url, &script).await?;
    }
    if stores.targets.iter().any(|t| t.kind == Kind::Sqlite) {
        let floor =
            SqliteFloor::open(args.concurrency).context("the SQLite floor's scratch file")?;
        rounds.sqlite_floor = Some(floor);
    }
    let capped = !rounds.run(&mut stores.targets).await?;
    let floors = std::mem::take(&mut rounds.floors);
    drop(rounds);
    if capped {
        println!(
            "time cap of {} s reached: what follows is what was measured by then",
            args.max_seconds
        );
    }
    print_table(&stores.targets, &floors);
    print_floors(&args, &floors);
    print_goals(&stores.targets, &floors);
    finish(stores, url.as_deref()).await?;
    let _ = std::fs::remove_file(&script);
    println!("done in {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

fn print_header(args: &Args) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "store-load: {} clients on keep-alive loopback HTTP; per round {} fresh keys through \
         PostgreSQL, {} through SQLite, {} replays through each, {} per memory path; {} rounds \
         after a warm-up, each path beside its floor, median of the rounds' ratios; pgbench {} s \
         per mode per round; {} cores",
        args.concurrency,
        args.pg_requests,
        args.sqlite_requests,
        args.replay_requests,
        args.memory_requests,
        args.rounds,
        args.pgbench_seconds,
        cores
    );
}

/// The stores measured, each behind its own server.
struct Stores {
    targets: Vec<Target>,
    pg: Option<PgEntries>,
    sqlite: Option<SqliteEntries>,
}

/// Opens the stores `--stores` names (PostgreSQL only with a URL), each behind a server.
async fn open_stores(
    args: &Args,
    url: Option<&str>,
    limits: StoreLimits,
) -> anyhow::Result<Stores> {
    let options = StoreOptions {
        limits,
        ..StoreOptions::default()
    };
    let wanted = |kind: Kind| {
        args.stores.is_empty()
            || args
                .stores
                .iter()
                .any(|s| kind.flag().eq_ignore_ascii_case(s))
    };
    let mut stores = Stores {
        targets: Vec::new(),
        pg: None,
        sqlite: None,
    };
    match url {
        _ if !wanted(Kind::Postgres) => {}
        Some(url) => {
            let store = PgEntries::throwaway(url, options.clone())
                .await
                .context("open the PostgreSQL store")?;
            let ledger: Arc<dyn PaymentLedger> = Arc::new(PgPayments::new(&store));
            let layer = IdempotencyLayer::builder().store(store.clone()).build();
            let counts = (args.pg_requests, args.replay_requests);
            stores
                .targets
                .push(target(Kind::Postgres, layer, ledger, counts).await?);
            stores.pg = Some(store);
        }
        None => println!("PostgreSQL and pgbench: skipped ({URL_VAR} is not set)"),
    }
    if wanted(Kind::Sqlite) {
        let store = SqliteEntries::throwaway(options).context("open the SQLite store")?;
        let ledger: Arc<dyn PaymentLedger> = Arc::new(SqlitePayments::new(&store));
        let layer = IdempotencyLayer::builder().store(store.clone()).build();
        let counts = (args.sqlite_requests, args.replay_requests);
        let mut target = target(Kind::Sqlite, layer, ledger, counts).await?;
        target.counter = Some(store.clone());
        stores.targets.push(target);
        stores.sqlite = Some(store);
    }
    if wanted(Kind::Memory) {
        let layer = IdempotencyLayer::builder()
            .store(MemoryEntries::new(limits))
            .build();
        let ledger: Arc<dyn PaymentLedger> = Arc::new(MemoryPayments::default());
        let counts = (args.memory_requests, args.memory_requests);
        stores
            .targets
            .push(target(Kind::Memory, layer, ledger, counts).await?);
    }
    Ok(stores)
}

/// pgbench's tables and the two-commit script, written to `script`: the `-f` argument that
/// runs it, or `None` (and why, printed) when pgbench cannot run.
async fn ready_pgbench(url: &str, script: &std::path::Path) -> anyhow::Result<Option<String>> {
    match prepare_pgbench(url).await {
        Ok(scale) => println!("pgbench: scale {scale} in the database's default schema"),
        Err(error) => {
            println!("pgbench: skipped ({error:#})");
            return Ok(None);
        }
    }
    std::fs::write(script, TWO_COMMITS).context("pgbench's script")?;
    Ok(Some(format!("-f{}", script.display())))
}

/// The measured rounds: what they need besides the targets, and the floors they measure.
struct Rounds<'a> {
    args: &'a Args,
    url: Option<&'a str>,
    /// pgbench's argument for the two-commit script; `None` when pgbench does not run.
    two_commits: Option<String>,
    sqlite_floor: Option<SqliteFloor>,
    next_key: Arc<AtomicU64>,
    deadline: Instant,
    floors: Floors,
}

impl Rounds<'_> {
    /// Runs every round: each store's paths, each right beside the floor it is held to, so
    /// that a round's ratio compares two figures taken under the same outside load. False when
    /// the time cap cut the rounds short.
    async fn run(&mut self, targets: &mut [Target]) -> anyhow::Result<bool> {
        for round in 0..=self.args.rounds {
            for target in targets.iter_mut() {
                for path in [Path::Fresh, Path::Replay] {
                    if !self.run_path(target, path, round).await? {
                        return Ok(false);
                    }
                }
            }
        }
        Ok(true)
    }

    /// One round of `path` on `target`, in slices, each followed by a slice of its floors.
    /// Round 0 warms up connections, prepared statements and caches (and the floors' files),
    /// in one slice; not reported. False when the time cap was reached.
    async fn run_path(
        &mut self,
        target: &mut Target,
        path: Path,
        round: usize,
    ) -> anyhow::Result<bool> {
        let requests = match path {
            Path::Fresh => target.fresh_requests,
            Path::Replay => target.replay_requests,
        };
        let (requests, slices) = if round == 0 {
            ((requests / 10).max(1), 1)
        } else {
            (requests, SLICES)
        };
        let modes = self.pgbench_modes(target.kind, path);
        let sqlite_floor = target.kind == Kind::Sqlite && path == Path::Fresh;
        let commits_before = target.commits();
        let mut driven = Vec::new();
        let mut figures = vec![Vec::new(); modes.len()];
        let mut commits = Vec::new();
        for slice in 0..slices {
            let part = requests / slices + u64::from(slice < requests % slices);
            let Some(run) = self.drive_slice(target, path, part).await? else {
                return Ok(false);
            };
            driven.push(run);
            let floor = self.sqlite_floor.as_mut().filter(|_| sqlite_floor);
            if round == 0 {
                if let Some(floor) = floor {
                    // Grows the scratch file's log to its working size, untimed.
                    floor.commit(SQLITE_FLOOR_COMMITS)?;
                }
                continue;
            }
            if let Some(floor) = floor {
                let part = SQLITE_FLOOR_COMMITS / u32::try_from(slices).unwrap_or(1);
                commits.push((part, floor.commit(part)?));
            }
            for (mode, figures) in modes.iter().zip(&mut figures) {
                let Some(tps) = self.pgbench_slice(mode).await? else {
                    return Ok(false);
                };
                figures.push(tps);
            }
        }
        if round == 0 {
            return Ok(true);
        }
        let measured = Measured::of(&driven);
        match path {
            Path::Fresh => target.fresh.push(measured),
            Path::Replay => target.replay.push(measured),
        }
        if let (Some(before), Some(after), Path::Fresh) = (commits_before, target.commits(), path) {
            target
                .commits_per_key
                .push((after - before) as f64 / requests as f64);
        }
        self.floors.record(&modes, &figures, &commits);
        Ok(true)
    }

    /// The pgbench modes `path` on `kind` is held to: PostgreSQL's paths only.
    fn pgbench_modes(&self, kind: Kind, path: Path) -> Vec<String> {
        match (kind, path, &self.two_commits) {
            (Kind::Postgres, Path::Fresh, Some(script)) => vec![script.clone(), "-N".to_owned()],
            (Kind::Postgres, Path::Replay, Some(_)) => vec!["-S".to_owned()],
            _ => Vec::new(),
        }
    }

    /// `requests` requests of `path` to `target`; `None` at the time cap.
    async fn drive_slice(
        &self,
        target: &mut Target,
        path: Path,
        requests: u64,
    ) -> anyhow::Result<Option<Driven>> {
        let Some(left) = self.deadline.checked_duration_since(Instant::now()) else {
            return Ok(None);
        };
        let prefix = format!("{}-", target.kind.name());
        let base = target.server.url();
        let concurrency = self.args.concurrency;
        let run = drive(path, &base, &prefix, requests, concurrency, &self.next_key);
        let Ok(run) = tokio::time::timeout(left, run).await else {
            return Ok(None);
        };
        let run = run.with_context(|| format!("{} {path:?}", target.kind.name()))?;
        if path == Path::Fresh {
            target.fresh_sent += requests;
        }
        Ok(Some(run))
    }

    /// One slice of `pgbench <mode>`, in transactions per second; `None` if it would pass the
    /// time cap.
    async fn pgbench_slice(&self, mode: &str) -> anyhow::Result<Option<f64>> {
        let seconds = (self.args.pgbench_seconds / SLICES).max(1);
        if Instant::now() + Duration::from_secs(seconds + 5) > self.deadline {
            return Ok(None);
        }
        let url = self.url.unwrap_or_default();
        pgbench_tps(url, mode, self.args.concurrency, seconds)
            .await
            .map(Some)
    }
}

impl Floors {
    /// A round's floors from its slices: pgbench's per mode, and the SQLite commits with the
    /// time they took. Slices of equal length: a round's pgbench figure is their mean.
    fn record(&mut self, modes: &[String], figures: &[Vec<f64>], commits: &[(u32, Duration)]) {
        for (mode, figures) in modes.iter().zip(figures) {
            let round = mean(figures);
            match mode.as_str() {
                "-N" => self.pgbench_n.push(round),
                "-S" => self.pgbench_s.push(round),
                _ => self.two_commits.push(round),
            }
        }
        if !commits.is_empty() {
            let made: u32 = commits.iter().map(|(n, _)| n).sum();
            let took: Duration = commits.iter().map(|(_, took)| *took).sum();
            self.sqlite_commits
                .push(f64::from(made) / took.as_secs_f64());
        }
    }

    /// Fresh keys per second at the SQLite floor: a fresh key commits twice, so half the
    /// floor's commits.
    fn sqlite_keys(&self) -> Vec<f64> {
        self.sqlite_commits.iter().map(|c| c / 2.0).collect()
    }
}

/// Every path's median figures, each beside the floor it is held to and the median ratio.
fn print_table(targets: &[Target], floors: &Floors) {
    let sqlite_keys = floors.sqlite_keys();
    println!();
    println!(
        "{:<38} {:>8} {:>8} {:>8} {:>18} {:>7}",
        "path", "tps", "p50 ms", "p99 ms", "held to", "ratio"
    );
    for target in targets {
        // `pgbench -S` reads PostgreSQL over the network: no floor for a replay from a file.
        let (fresh_floor, replay_floor) = match target.kind {
            Kind::Postgres => (
                Some(("pgbench, two commits", &floors.two_commits)),
                Some(("pgbench -S", &floors.pgbench_s)),
            ),
            Kind::Sqlite => (Some(("fsync floor", &sqlite_keys)), None),
            Kind::Memory => (None, None),
        };
        for (what, measured, floor) in [
            ("fresh key per request", &target.fresh, fresh_floor),
            ("replay of one stored key", &target.replay, replay_floor),
        ] {
            if measured.is_empty() {
                continue;
            }
            let (against, ratio) = match floor {
                Some((against, floor)) if !floor.is_empty() => {
                    (against, format!("{:.0}%", median(&ratios(measured, floor))))
                }
                _ => ("", String::new()),
            };
            println!(
                "{:<38} {:>8.0} {:>8.2} {:>8.2} {:>18} {:>7}",
                format!("{}, {what}", target.kind.name()),
                median_by(measured, |m| m.tps),
                median_by(measured, |m| m.p50.as_secs_f64()) * 1e3,
                median_by(measured, |m| m.p99.as_secs_f64()) * 1e3,
                against,
                ratio
            );
        }
    }
}

/// The floors themselves, with every round's figure.
fn print_floors(args: &Args, floors: &Floors) {
    for (what, figures) in [
        ("pgbench, two commits", &floors.two_commits),
        ("pgbench -N", &floors.pgbench_n),
        ("pgbench -S", &floors.pgbench_s),
    ] {
        if !figures.is_empty() {
            println!(
                "{:<38} {:>8.0}   (rounds: {})",
                format!("{what}, {} clients", args.concurrency),
                median(figures),
                listed(figures, "")
            );
        }
    }
    let sqlite_keys = floors.sqlite_keys();
    if !sqlite_keys.is_empty() {
        println!(
            "{:<38} {:>8.0}   (rounds: {}; half the single-row commits/s of {} writers \
             taking turns, synchronous = FULL, {} commits a round)",
            "SQLite fsync floor, fresh keys/s",
            median(&sqlite_keys),
            listed(&sqlite_keys, ""),
            args.concurrency,
            SQLITE_FLOOR_COMMITS
        );
    }
}

/// Each fresh key on one line against its floor, then the goals. Each round's ratio is the
/// path over the floor measured beside it; the median of the rounds is the figure, the rounds
/// themselves the spread.
fn print_goals(targets: &[Target], floors: &Floors) {
    println!();
    let mut goals = Vec::new();
    if let Some(pg) = targets.iter().find(|t| t.kind == Kind::Postgres)
        && !floors.two_commits.is_empty()
    {
        let to_floor = ratios(&pg.fresh, &floors.two_commits);
        let to_n = ratios(&pg.fresh, &floors.pgbench_n);
        println!(
            "PostgreSQL, fresh key: {:.0}% of the two-commit floor ({:.0}% of pgbench -N); \
             rounds: {} ({} of -N)",
            median(&to_floor),
            median(&to_n),
            listed(&to_floor, "%"),
            listed(&to_n, "%")
        );
        println!(
            "  (the floor: pgbench running a fresh key's two transactions, each with its commit, \
             at {:.0}% of pgbench -N)",
            100.0 * median(&floors.two_commits) / median(&floors.pgbench_n)
        );
        goals.push((
            "PostgreSQL fresh key >= 90% of the two-commit floor",
            90.0,
            to_floor,
        ));
        let to_s = ratios(&pg.replay, &floors.pgbench_s);
        goals.push(("PostgreSQL replay >= 50% of pgbench -S", 50.0, to_s));
    }
    let sqlite_keys = floors.sqlite_keys();
    if let Some(sqlite) = targets.iter().find(|t| t.kind == Kind::Sqlite)
        && !sqlite_keys.is_empty()
    {
        let to_floor = ratios(&sqlite.fresh, &sqlite_keys);
        println!(
            "SQLite, fresh key: {:.0}% of its fsync floor ({:.0} of {:.0} requests/s), \
             {:.2} commits per key; rounds: {} ({} commits per key)",
            median(&to_floor),
            median_by(&sqlite.fresh, |m| m.tps),
            median(&sqlite_keys),
            median(&sqlite.commits_per_key),
            listed(&to_floor, "%"),
            listed_to(&sqlite.commits_per_key, 2)
        );
        println!(
            "  (the floor commits every write alone; the store shares a commit among the writes \
             that wait, so its ratio is the gain of sharing, not headroom)"
        );
        goals.push(("SQLite fresh key >= 80% of its fsync floor", 80.0, to_floor));
    }
    for (what, goal, ratios) in goals {
        if ratios.is_empty() {
            continue;
        }
        let ratio = median(&ratios);
        let verdict = if ratio >= goal { "met" } else { "missed" };
        println!(
            "goal: {what}: {verdict} (median {ratio:.0}% of {} rounds)",
            ratios.len()
        );
    }
}

/// Checks every store charged once per fresh key, prints what a stored response costs, and
/// stops the servers and removes the throwaway stores.
async fn finish(stores: Stores, url: Option<&str>) -> anyhow::Result<()> {
    println!();
    for target in &stores.targets {
        // The replayed key charged once, before round 0.
        println!(
            "charges, {}: {} (expected {})",
            target.kind.name(),
            target.payments.charges().await?,
            target.fresh_sent + 1
        );
    }
    if let (Some(url), Some(store)) = (url, &stores.pg) {
        pg_footprint(url, store.schema()).await?;
    }
    if let Some(store) = &stores.sqlite {
        sqlite_footprint(store.path())?;
    }
    for target in stores.targets {
        target.server.stop().await;
    }
    // Throwaways: the schema is dropped, and the file removed, with the last clone.
    drop(stores.pg);
    if let Some(store) = stores.sqlite {
        let path = store.path().to_path_buf();
        drop(store);
        println!("SQLite file {} removed: {}", path.display(), !path.exists());
    }
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
        counter: None,
        commits_per_key: Vec::new(),
    })
}

async fn drive(
    path: Path,
    url: &str,
    prefix: &str,
    requests: u64,
    concurrency: u64,
    next_key: &Arc<AtomicU64>,
) -> anyhow::Result<Driven> {
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
    Ok(Driven {
        requests,
        elapsed: started.elapsed(),
        latencies,
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

/// Each measured round runs a path in this many slices, each followed by a slice of its floor:
/// the disk and the other work on the machine change from second to second, and a path and its
/// floor should meet the same.
const SLICES: u64 = 3;

/// Single-row commits to measure the SQLite floor with, per round.
const SQLITE_FLOOR_COMMITS: u32 = 1000;

/// Single-row commits in a scratch file with the store's settings (WAL, `synchronous = FULL`),
/// one writer at a time: what the disk allows the store's writers, with nothing else in the
/// way. As in the store, several threads, each on its own connection, take turns at one lock
/// (on this kind of disk they commit faster than one thread alone). Kept open across rounds,
/// so that its log has grown to its working size as the store's has.
struct SqliteFloor {
    /// One per thread; closed before the files are removed.
    conns: Vec<Mutex<rusqlite::Connection>>,
    path: std::path::PathBuf,
    /// The next row's id, and the writers' turn.
    next: Mutex<u32>,
}

impl SqliteFloor {
    fn open(writers: u64) -> anyhow::Result<Self> {
        let path =
            std::env::temp_dir().join(format!("retrykey-floor-{}.sqlite", std::process::id()));
        let mut conns = Vec::new();
        for _ in 0..writers.max(1) {
            let conn = rusqlite::Connection::open(&path)?;
            conn.busy_timeout(Duration::from_secs(5))?;
            conn.pragma_update(None, "journal_mode", "WAL")?;
            conn.pragma_update(None, "synchronous", "FULL")?;
            conn.execute_batch(
                "CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, body BLOB NOT NULL)",
            )?;
            conns.push(Mutex::new(conn));
        }
        Ok(Self {
            conns,
            path,
            next: Mutex::new(0),
        })
    }

    /// How long `commits` commits take, each `BEGIN IMMEDIATE`, one insert, `COMMIT`, shared
    /// out over the writers.
    fn commit(&mut self, commits: u32) -> anyhow::Result<Duration> {
        let end = *self
            .next
            .lock()
            .map_err(|_| anyhow!("a floor writer panicked"))?
            + commits;
        let started = Instant::now();
        std::thread::scope(|scope| {
            let writers: Vec<_> = self
                .conns
                .iter()
                .map(|conn| {
                    let next = &self.next;
                    scope.spawn(move || -> anyhow::Result<()> {
                        let body = vec![7u8; 200];
                        let mut conn = conn
                            .lock()
                            .map_err(|_| anyhow!("a floor writer panicked"))?;
                        loop {
                            // The turn: held across the transaction, as the store's writers do.
                            let mut turn = next
                                .lock()
                                .map_err(|_| anyhow!("a floor writer panicked"))?;
                            if *turn >= end {
                                return Ok(());
                            }
                            let tx = conn.transaction_with_behavior(
                                rusqlite::TransactionBehavior::Immediate,
                            )?;
                            tx.execute(
                                "INSERT INTO rows (id, body) VALUES (?1, ?2)",
                                rusqlite::params![*turn, body],
                            )?;
                            tx.commit()?;
                            *turn += 1;
                        }
                    })
                })
                .collect();
            writers.into_iter().try_for_each(|writer| {
                writer
                    .join()
                    .map_err(|_| anyhow!("a floor writer panicked"))?
            })
        })?;
        Ok(started.elapsed())
    }
}

impl Drop for SqliteFloor {
    fn drop(&mut self) {
        self.conns.clear();
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", self.path.display()));
        }
    }
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

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

fn median(values: &[f64]) -> f64 {
    let mut values = values.to_vec();
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn median_by(measured: &[Measured], value: impl Fn(&Measured) -> f64) -> f64 {
    median(&measured.iter().map(value).collect::<Vec<_>>())
}

/// `values` with `decimals` decimals, comma-separated.
fn listed_to(values: &[f64], decimals: usize) -> String {
    values
        .iter()
        .map(|v| format!("{v:.decimals$}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `values`, each with `unit` after it, comma-separated.
fn listed(values: &[f64], unit: &str) -> String {
    values
        .iter()
        .map(|v| format!("{v:.0}{unit}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Each round's rate as a percentage of the floor measured beside it (rounds cut short by the
/// time cap left out).
fn ratios(measured: &[Measured], floor: &[f64]) -> Vec<f64> {
    measured
        .iter()
        .zip(floor)
        .map(|(m, floor)| 100.0 * m.tps / floor)
        .collect()
}
