//! A soak: one `payments` process under a steady mix of traffic for minutes or an hour, with a
//! short retention so that the sweeper runs all the time.
//!
//! The mix, at a set rate: fresh keys, replays of recent keys (each must equal its first
//! answer), conflicts (a used key with another body: 422), keyless payments, and abandoned
//! requests (the client sends a keyed payment and leaves; a later retry must settle it once).
//! Each interval it prints the server's resident memory and open files, the keys table's rows
//! and size, the log's size, p50/p99 and errors. It fails when a figure grows past its bound
//! after the warm-up, when p99 drifts past its bound (on a run long enough to show drift), or
//! when any answer or the charge count is wrong.
//!
//! `cargo run --release -p retrykey-benches --bin soak -- --payments target/release/payments [--minutes M] [--store memory|sqlite|postgres] [--rate R]`

use std::collections::VecDeque;
use std::io::Write;
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::{Parser, ValueEnum};
use retrykey_server::loopback::LoopbackClient;
use retrykey_testkit::load::{PaymentsProcess, resident_bytes};
use retrykey_testkit::{FreshSchema, ScratchFile};
use tokio::sync::Semaphore;

const URL_VAR: &str = "RETRYKEY_PG_URL";
const BODY: &str = r#"{"amount":5}"#;
/// The body a conflict sends under a used key.
const OTHER_BODY: &str = r#"{"amount":7}"#;
/// Full rows after the warm-up from which p99 drift is judged: a short run prints it only.
const DRIFT_ROWS: usize = 8;
/// Requests in flight at most; past it the soak waits, and the interval's rate shows it.
const IN_FLIGHT: usize = 64;
/// Each request's deadline: an answer later than this is an error.
const DEADLINE: Duration = Duration::from_secs(10);
/// How long an abandoned key may take to settle: the store's lease may have to run out first.
const SETTLE_WITHIN: Duration = Duration::from_secs(30);

/// The mix, one cycle of twenty requests.
const MIX: [Kind; 20] = {
    use Kind::*;
    [
        Fresh, Replay, Keyless, Fresh, Conflict, Replay, Fresh, Abandoned, Keyless, Replay, Fresh,
        Fresh, Replay, Conflict, Keyless, Fresh, Abandoned, Replay, Fresh, Fresh,
    ]
};

#[derive(Debug, Parser)]
struct Args {
    /// The payments binary to start.
    #[arg(long)]
    payments: PathBuf,
    /// How long the traffic runs.
    #[arg(long, default_value_t = 10)]
    minutes: u64,
    /// Where the server keeps keys and charges.
    #[arg(long, value_enum, default_value_t = Store::Memory)]
    store: Store,
    /// Requests started per second.
    #[arg(long, default_value_t = 100)]
    rate: u64,
    /// How long the server keeps a finished key, in seconds.
    #[arg(long, default_value_t = 5)]
    retention_s: u64,
    /// Seconds per row of the table: a minute, or a sixth of a shorter run.
    #[arg(long)]
    every_s: Option<u64>,
    /// The bound on p99: the last half's median p99 at most this many times the first half's.
    #[arg(long, default_value_t = 3.0)]
    p99_factor: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Store {
    Memory,
    Sqlite,
    Postgres,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Fresh,
    Replay,
    Conflict,
    Keyless,
    Abandoned,
}

/// A key's first answer, kept while a replay of it is certain to find it.
struct Answered {
    key: String,
    body: String,
    /// When its first request was sent: the record expires a retention after it, or later.
    sent: Instant,
}

/// What the traffic shares: the client, recent answers, and the running counts.
struct Traffic {
    client: LoopbackClient,
    addr: String,
    recent: Mutex<VecDeque<Answered>>,
    /// A replay or conflict only picks a key this young: well inside the retention.
    young: Duration,
    retention: Duration,
    /// Replays and conflicts that reached a key after its retention (see [`Traffic::late`]).
    late: AtomicU64,
    /// Requests started, taken and reset with each row.
    started: AtomicU64,
    next: AtomicU64,
    /// Charges the server should hold: fresh, keyless and abandoned payments.
    effects: AtomicU64,
    window: Mutex<Window>,
}

/// One interval's figures, taken and reset at each row.
#[derive(Default)]
struct Window {
    latencies: Vec<Duration>,
    errors: u64,
    wrong: u64,
    /// The first few wrong answers, for the report.
    examples: Vec<String>,
}

/// One row of the table.
struct Row {
    at: Duration,
    /// The interval this row covers.
    span: Duration,
    /// Requests started in it.
    started: u64,
    requests: usize,
    p50: Duration,
    p99: Duration,
    errors: u64,
    wrong: u64,
    rss: u64,
    fds: u64,
    db: Option<DbFigures>,
}

/// The database's figures at one row.
#[derive(Clone, Copy)]
struct DbFigures {
    rows: u64,
    keys_bytes: u64,
    file_bytes: u64,
    /// SQLite: the log file's size; PostgreSQL: log written during the interval.
    wal_bytes: u64,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if args.minutes == 0 || args.rate == 0 || args.retention_s == 0 {
        bail!("--minutes, --rate and --retention-s must be above zero");
    }
    let Some(place) = Place::new(args.store) else {
        println!("soak: skipped ({URL_VAR} is not set: the postgres store needs a server)");
        return Ok(());
    };
    let cap = args.minutes * 60 + 180;
    // The place outlives the runtime: its file is removed, or its schema dropped, when it drops
    // here, also after the cap cut the run short.
    retrykey_testkit::load::run_within(cap, soak(&args, &place))
}

async fn soak(args: &Args, place: &Place) -> anyhow::Result<()> {
    let server_args = [
        "--store".to_owned(),
        place.store_flag(),
        "--pg-schema".to_owned(),
        place.schema_name(),
        "--retention".to_owned(),
        format!("{}s", args.retention_s),
        "--max-entries".to_owned(),
        "10000000".to_owned(),
    ];
    let server = PaymentsProcess::start(&args.payments, &server_args)?;
    run(args, &server, place).await
}

async fn run(args: &Args, server: &PaymentsProcess, place: &Place) -> anyhow::Result<()> {
    let total = Duration::from_secs(args.minutes * 60);
    let every = Duration::from_secs(args.every_s.unwrap_or((args.minutes * 10).min(60)));
    println!(
        "soak: {} store, {} requests/s for {} min, retention {} s, a row every {} s; each cycle \
         of 20: 8 fresh keys, 5 replays, 2 conflicts, 3 keyless, 2 abandoned",
        args.store.name(),
        args.rate,
        args.minutes,
        args.retention_s,
        every.as_secs()
    );
    let traffic = Arc::new(Traffic {
        client: LoopbackClient::new(server.url.clone()),
        addr: server.addr().to_owned(),
        recent: Mutex::new(VecDeque::new()),
        young: Duration::from_secs(args.retention_s) / 2,
        retention: Duration::from_secs(args.retention_s),
        late: AtomicU64::new(0),
        started: AtomicU64::new(0),
        next: AtomicU64::new(0),
        effects: AtomicU64::new(0),
        window: Mutex::new(Window::default()),
    });
    let mut sampler = Sampler {
        pid: server.pid(),
        place,
        last_lsn: None,
        last_at: Duration::ZERO,
    };
    let rows = drive(args, &traffic, total, every, &mut sampler).await?;
    let charges = retrykey_testkit::load::charges(&server.url).await?;
    let paid = Paid {
        charges,
        effects: traffic.effects.load(Ordering::SeqCst),
        late: traffic.late.load(Ordering::SeqCst),
    };
    let verdicts = judge(args, &rows, &paid);
    print_verdicts(&verdicts, &traffic);
    if verdicts.iter().any(|v| v.held == Some(false)) {
        bail!("the soak broke a bound: see the lines marked FAIL");
    }
    println!("soak: passed");
    Ok(())
}

/// Starts requests at the set rate until `total`, takes a row every `every`, then waits for
/// the requests still running.
async fn drive(
    args: &Args,
    traffic: &Arc<Traffic>,
    total: Duration,
    every: Duration,
    sampler: &mut Sampler<'_>,
) -> anyhow::Result<Vec<Row>> {
    let started = tokio::time::Instant::now();
    let permits = Arc::new(Semaphore::new(IN_FLIGHT));
    let mut ticks = tokio::time::interval(Duration::from_secs(1) / args.rate as u32);
    // Open loop: ticks missed while the machine was busy are caught up, so the rate is the
    // one asked for unless the server holds every permit.
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut next_row = started + every;
    let mut rows = Vec::new();
    print_header();
    let mut n = 0_usize;
    while started.elapsed() < total {
        ticks.tick().await;
        let permit = Arc::clone(&permits).acquire_owned().await?;
        traffic.started.fetch_add(1, Ordering::Relaxed);
        let sender = Arc::clone(traffic);
        let kind = MIX[n % MIX.len()];
        n += 1;
        tokio::spawn(async move {
            sender.one(kind).await;
            drop(permit);
        });
        if tokio::time::Instant::now() >= next_row {
            let row = sampler.take(started.elapsed(), traffic).await?;
            print_row(&row, false);
            rows.push(row);
            next_row += every;
        }
    }
    // Every request still running has finished once all the permits are back.
    let all = u32::try_from(IN_FLIGHT)?;
    let _all_back = tokio::time::timeout(SETTLE_WITHIN + DEADLINE, permits.acquire_many(all))
        .await
        .context("requests still running after the traffic stopped")??;
    // The last row covers only the requests that were still running: it is judged with the
    // others, and named `end` rather than given a rate.
    let row = sampler.take(started.elapsed(), traffic).await?;
    print_row(&row, true);
    rows.push(row);
    Ok(rows)
}

impl Traffic {
    async fn one(&self, kind: Kind) {
        let outcome = match kind {
            Kind::Fresh => self.fresh().await,
            Kind::Replay => self.replay().await,
            Kind::Conflict => self.conflict().await,
            Kind::Keyless => self.keyless().await,
            Kind::Abandoned => self.abandoned().await,
        };
        let mut window = self.window.lock().unwrap_or_else(PoisonError::into_inner);
        match outcome {
            Ok(()) => {}
            Err(Failure::Transport(error)) => {
                window.errors += 1;
                if window.examples.len() < 3 {
                    window.examples.push(format!("{kind:?}: {error}"));
                }
            }
            Err(Failure::Wrong(what)) => {
                window.wrong += 1;
                if window.examples.len() < 3 {
                    window.examples.push(format!("{kind:?}: {what}"));
                }
            }
        }
    }

    fn new_key(&self, prefix: &str) -> String {
        format!("soak-{prefix}{}", self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// A keyed payment, timed into the interval's latencies.
    async fn post(&self, key: Option<&str>, body: &str) -> Result<Reply, Failure> {
        let headers: Vec<(&str, &str)> = key
            .map(|key| ("idempotency-key", key))
            .into_iter()
            .collect();
        let sent = Instant::now();
        let reply = tokio::time::timeout(
            DEADLINE,
            self.client.post("/payments", &headers, body.to_owned()),
        )
        .await
        .map_err(|_| Failure::Transport(format!("no answer within {DEADLINE:?}")))?
        .map_err(|error| Failure::Transport(error.to_string()))?;
        let took = sent.elapsed();
        self.window
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .latencies
            .push(took);
        Ok(Reply {
            status: reply.status,
            replayed: reply.replayed(),
            retry_after: reply.header("retry-after").is_some(),
            body: reply.body,
        })
    }

    async fn fresh(&self) -> Result<(), Failure> {
        let key = self.new_key("");
        let sent = Instant::now();
        let reply = self.post(Some(&key), BODY).await?;
        if reply.status != 201 || reply.replayed {
            return Err(Failure::wrong(&key, "201, not replayed", &reply));
        }
        self.effects.fetch_add(1, Ordering::SeqCst);
        let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        recent.push_back(Answered {
            key,
            body: reply.body,
            sent,
        });
        Ok(())
    }

    /// A key answered recently enough that the store certainly still holds it.
    fn pick(&self) -> Option<(String, String, Instant)> {
        let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        while recent
            .front()
            .is_some_and(|a| a.sent.elapsed() > self.young)
        {
            recent.pop_front();
        }
        let n = self.next.load(Ordering::Relaxed) as usize;
        let len = recent.len();
        let picked = recent.get(n.checked_rem(len)?)?;
        Some((picked.key.clone(), picked.body.clone(), picked.sent))
    }

    /// A replay or conflict answered as a new payment, after the key's retention had run out
    /// since its first request: the soak was late, not the server wrong. It charged.
    fn late(&self, reply: &Reply, first_sent: Instant) -> bool {
        let late = reply.status == 201 && !reply.replayed && first_sent.elapsed() > self.retention;
        if late {
            self.effects.fetch_add(1, Ordering::SeqCst);
            self.late.fetch_add(1, Ordering::SeqCst);
        }
        late
    }

    async fn replay(&self) -> Result<(), Failure> {
        let Some((key, first, sent)) = self.pick() else {
            return self.fresh().await;
        };
        let reply = self.post(Some(&key), BODY).await?;
        if self.late(&reply, sent) {
            return Ok(());
        }
        if reply.status != 201 || !reply.replayed || reply.body != first {
            return Err(Failure::wrong(
                &key,
                "201, replayed, the first body",
                &reply,
            ));
        }
        Ok(())
    }

    async fn conflict(&self) -> Result<(), Failure> {
        let Some((key, _, sent)) = self.pick() else {
            return self.fresh().await;
        };
        let reply = self.post(Some(&key), OTHER_BODY).await?;
        if self.late(&reply, sent) {
            return Ok(());
        }
        if reply.status != 422 {
            return Err(Failure::wrong(&key, "422", &reply));
        }
        Ok(())
    }

    async fn keyless(&self) -> Result<(), Failure> {
        let reply = self.post(None, BODY).await?;
        if reply.status != 201 || reply.replayed {
            return Err(Failure::wrong("(no key)", "201, not replayed", &reply));
        }
        self.effects.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    /// Sends a keyed payment on a raw connection and leaves without reading, then retries the
    /// key until it is settled: 201, once.
    async fn abandoned(&self) -> Result<(), Failure> {
        let key = self.new_key("left-");
        let request = format!(
            "POST /payments HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\n\
             idempotency-key: {key}\r\ncontent-length: {}\r\n\r\n{BODY}",
            self.addr,
            BODY.len()
        );
        let addr = self.addr.clone();
        tokio::task::spawn_blocking(move || -> std::io::Result<()> {
            let mut stream = TcpStream::connect(addr)?;
            stream.write_all(request.as_bytes())
        })
        .await
        .map_err(|error| Failure::Transport(error.to_string()))?
        .map_err(|error| Failure::Transport(format!("abandoned request: {error}")))?;
        let settle_by = Instant::now() + SETTLE_WITHIN;
        loop {
            let reply = self.post(Some(&key), BODY).await?;
            match reply.status {
                201 => break,
                409 | 503 if reply.retry_after && Instant::now() < settle_by => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                _ => return Err(Failure::wrong(&key, "201 once settled", &reply)),
            }
        }
        self.effects.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

struct Reply {
    status: u16,
    replayed: bool,
    retry_after: bool,
    body: String,
}

enum Failure {
    /// No answer: refused, cut, or past the deadline.
    Transport(String),
    /// An answer other than the one the request must get.
    Wrong(String),
}

impl Failure {
    fn wrong(key: &str, expected: &str, reply: &Reply) -> Self {
        Failure::Wrong(format!(
            "key {key}: expected {expected}, got {} (replayed: {}) {}",
            reply.status, reply.replayed, reply.body
        ))
    }
}

/// Where the server keeps its data, and how the soak reads its figures. Dropped, it removes
/// the SQLite file or drops the PostgreSQL schema.
struct Place {
    store: Store,
    file: ScratchFile,
    schema: Option<FreshSchema>,
    url: Option<String>,
}

impl Place {
    /// `None` when the store needs PostgreSQL and there is none.
    fn new(store: Store) -> Option<Self> {
        let url = std::env::var(URL_VAR).ok().filter(|url| !url.is_empty());
        if store == Store::Postgres && url.is_none() {
            return None;
        }
        Some(Self {
            store,
            file: ScratchFile::new("soak"),
            schema: (store == Store::Postgres)
                .then(|| url.as_deref().map(FreshSchema::new))
                .flatten(),
            url,
        })
    }

    fn store_flag(&self) -> String {
        match self.store {
            Store::Memory => "memory".to_owned(),
            Store::Sqlite => format!("sqlite:{}", self.file.path().display()),
            Store::Postgres => "postgres".to_owned(),
        }
    }

    /// The schema the server opens (unused but for PostgreSQL).
    fn schema_name(&self) -> String {
        self.schema.as_ref().map_or_else(
            || "soak_unused".to_owned(),
            |schema| schema.name().to_owned(),
        )
    }

    async fn figures(&self, last_lsn: &mut Option<i64>) -> anyhow::Result<Option<DbFigures>> {
        match self.store {
            Store::Memory => Ok(None),
            Store::Sqlite => {
                let file = self.file.path().to_owned();
                tokio::task::spawn_blocking(move || sqlite_figures(&file).map(Some)).await?
            }
            Store::Postgres => {
                let url = self.url.as_deref().context("no PostgreSQL URL")?;
                pg_figures(url, &self.schema_name(), last_lsn)
                    .await
                    .map(Some)
            }
        }
    }
}

/// Rows and bytes of the keys table, the file and its log.
fn sqlite_figures(file: &std::path::Path) -> anyhow::Result<DbFigures> {
    let conn = rusqlite::Connection::open(file)?;
    conn.busy_timeout(Duration::from_secs(5))?;
    let rows: i64 = conn.query_row("SELECT count(*) FROM http_keys", [], |row| row.get(0))?;
    let keys_bytes: i64 = conn.query_row(
        "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN ('http_keys', 'http_keys_expiry')",
        [],
        |row| row.get(0),
    )?;
    let size = |suffix: &str| {
        let mut path = file.as_os_str().to_owned();
        path.push(suffix);
        std::fs::metadata(path).map_or(0, |meta| meta.len())
    };
    Ok(DbFigures {
        rows: rows.unsigned_abs(),
        keys_bytes: keys_bytes.unsigned_abs(),
        file_bytes: size(""),
        wal_bytes: size("-wal"),
    })
}

/// Rows and bytes of the keys table, the store's tables, and the log written since the last
/// row.
async fn pg_figures(
    url: &str,
    schema: &str,
    last_lsn: &mut Option<i64>,
) -> anyhow::Result<DbFigures> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
    tokio::spawn(connection);
    let table = format!("{schema}.http_keys");
    let row = client
        .query_one(
            &format!(
                "SELECT (SELECT count(*) FROM {table}),
                        pg_total_relation_size($1::text::regclass),
                        (SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
                           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                          WHERE n.nspname = $2 AND c.relkind = 'r'),
                        (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint"
            ),
            &[&table, &schema],
        )
        .await?;
    let (rows, keys_bytes, file_bytes, lsn): (i64, i64, i64, i64) =
        (row.get(0), row.get(1), row.get(2), row.get(3));
    let wal_bytes = last_lsn.map_or(0, |last| lsn - last);
    *last_lsn = Some(lsn);
    Ok(DbFigures {
        rows: rows.unsigned_abs(),
        keys_bytes: keys_bytes.unsigned_abs(),
        file_bytes: file_bytes.unsigned_abs(),
        wal_bytes: wal_bytes.unsigned_abs(),
    })
}

/// Takes the rows: the server's process and the database, read from outside.
struct Sampler<'a> {
    pid: u32,
    place: &'a Place,
    last_lsn: Option<i64>,
    last_at: Duration,
}

impl Sampler<'_> {
    async fn take(&mut self, at: Duration, traffic: &Traffic) -> anyhow::Result<Row> {
        let window = std::mem::take(
            &mut *traffic
                .window
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for example in &window.examples {
            println!("  {example}");
        }
        let mut latencies = window.latencies;
        latencies.sort_unstable();
        let span = at.saturating_sub(std::mem::replace(&mut self.last_at, at));
        Ok(Row {
            at,
            span,
            started: traffic.started.swap(0, Ordering::Relaxed),
            requests: latencies.len(),
            p50: retrykey_benches::latency_at(&latencies, 0.50),
            p99: retrykey_benches::latency_at(&latencies, 0.99),
            errors: window.errors,
            wrong: window.wrong,
            rss: resident_bytes(self.pid)?,
            fds: open_files(self.pid)?,
            db: self.place.figures(&mut self.last_lsn).await?,
        })
    }
}

/// The process's open file descriptors, sockets included.
fn open_files(pid: u32) -> anyhow::Result<u64> {
    let dir = format!("/proc/{pid}/fd");
    Ok(std::fs::read_dir(&dir)
        .with_context(|| format!("read {dir}"))?
        .count() as u64)
}

impl Store {
    fn name(self) -> &'static str {
        match self {
            Store::Memory => "memory",
            Store::Sqlite => "SQLite",
            Store::Postgres => "PostgreSQL",
        }
    }
}

fn print_header() {
    println!(
        "(rows, keys: the keys table and its index; db: every table of the store, the charges \
         included; WAL: the SQLite log's file, or the log the whole PostgreSQL server wrote in \
         the interval)"
    );
    println!(
        "{:>6} {:>8} {:>7} {:>7} {:>7} {:>6} {:>6} {:>8} {:>5} {:>7} {:>9} {:>9} {:>9}",
        "at",
        "answers",
        "per s",
        "p50 ms",
        "p99 ms",
        "errors",
        "wrong",
        "RSS MiB",
        "fds",
        "rows",
        "keys KiB",
        "db KiB",
        "WAL KiB"
    );
}

fn print_row(row: &Row, last: bool) {
    let db = |f: fn(&DbFigures) -> String| row.db.as_ref().map_or("-".to_owned(), f);
    let secs = row.at.as_secs();
    let (at, rate) = if last {
        ("end".to_owned(), "-".to_owned())
    } else {
        (
            format!("{}:{:02}", secs / 60, secs % 60),
            format!(
                "{:.0}",
                row.requests as f64 / row.span.as_secs_f64().max(0.001)
            ),
        )
    };
    println!(
        "{:>6} {:>8} {:>7} {:>7.2} {:>7.2} {:>6} {:>6} {:>8.1} {:>5} {:>7} {:>9} {:>9} {:>9}",
        at,
        row.requests,
        rate,
        row.p50.as_secs_f64() * 1e3,
        row.p99.as_secs_f64() * 1e3,
        row.errors,
        row.wrong,
        row.rss as f64 / f64::from(1 << 20),
        row.fds,
        db(|d| d.rows.to_string()),
        db(|d| (d.keys_bytes / 1024).to_string()),
        db(|d| (d.file_bytes / 1024).to_string()),
        db(|d| (d.wal_bytes / 1024).to_string()),
    );
    let _ = std::io::stdout().flush();
}

/// One bound, and whether the run kept it (`None`: the run was too short to judge it).
struct Verdict {
    what: String,
    held: Option<bool>,
}

impl Verdict {
    fn new(held: bool, what: String) -> Self {
        Self {
            what,
            held: Some(held),
        }
    }
}

/// Every bound the run must keep. The first row is the warm-up; the rows after it are split
/// into a first and a last half, and a figure that keeps growing shows as a last half above
/// the first one by more than its margin.
fn judge(args: &Args, rows: &[Row], paid: &Paid) -> Vec<Verdict> {
    let Paid {
        charges,
        effects,
        late,
    } = *paid;
    let (wrong, errors): (u64, u64) = rows
        .iter()
        .fold((0, 0), |(w, e), r| (w + r.wrong, e + r.errors));
    let answers: usize = rows.iter().map(|r| r.requests).sum();
    let mut verdicts = vec![
        Verdict::new(
            wrong == 0 && errors == 0,
            format!(
                "answers: {answers} timed, {wrong} wrong, {errors} without an answer (allowed: 0 and 0)"
            ),
        ),
        Verdict::new(
            charges == effects,
            format!(
                "charges: {charges} on the server, {effects} paid for (fresh, keyless and abandoned keys, \
                 and {late} replays or conflicts that reached a key past its retention): equal"
            ),
        ),
    ];
    let steady = rows.get(1..).unwrap_or_default();
    if steady.len() < 2 {
        verdicts.push(Verdict::new(
            false,
            "growth: too few rows to judge; run longer".to_owned(),
        ));
        return verdicts;
    }
    let (first, last) = steady.split_at(steady.len() / 2);
    verdicts.extend(growth(first, last));
    if steady.iter().any(|r| r.db.is_some()) {
        verdicts.extend(db_bounds(args, first, last));
    }
    verdicts.push(rate_kept(args, steady));
    verdicts.push(p99_drift(args, steady));
    verdicts
}

/// What the server charged against what the traffic paid for.
#[derive(Clone, Copy)]
struct Paid {
    charges: u64,
    effects: u64,
    /// Replays and conflicts that reached a key after its retention, and so charged.
    late: u64,
}

/// The rate the traffic kept: a server that slowed down would otherwise be judged on less load.
/// Over the full rows after the warm-up (the drain row is left out), at least 90% of `--rate`.
fn rate_kept(args: &Args, steady: &[Row]) -> Verdict {
    let full = &steady[..steady.len() - 1];
    let started: u64 = full.iter().map(|r| r.started).sum();
    let seconds: f64 = full.iter().map(|r| r.span.as_secs_f64()).sum();
    let kept = started as f64 / seconds.max(f64::EPSILON);
    let floor = 0.9 * args.rate as f64;
    Verdict::new(
        kept >= floor,
        format!(
            "rate: {kept:.1} requests/s started after the warm-up, at least {floor:.1} (90% of --rate)"
        ),
    )
}

/// The p99 of the last half against the first, over the full intervals (the drain row is left
/// out). Drift needs rows to show: a run with fewer than [`DRIFT_ROWS`] is reported, not judged.
fn p99_drift(args: &Args, steady: &[Row]) -> Verdict {
    let full = &steady[..steady.len() - 1];
    let (first, last) = full.split_at(full.len() / 2);
    let p99 = |rows: &[Row]| median(rows.iter().map(|r| r.p99.as_secs_f64() * 1e3).collect());
    let (before, after) = (p99(first), p99(last));
    let allowed = args.p99_factor * before + 5.0;
    let what = format!(
        "p99: median {after:.2} ms in the last half, at most {allowed:.2} ({} x the first half's {before:.2} + 5 ms)",
        args.p99_factor
    );
    if full.len() < DRIFT_ROWS {
        return Verdict {
            what: format!(
                "{what}: not judged, {} rows (drift is judged from {DRIFT_ROWS})",
                full.len()
            ),
            held: None,
        };
    }
    Verdict::new(after <= allowed, what)
}

/// The server process: resident memory and open files.
fn growth(first: &[Row], last: &[Row]) -> Vec<Verdict> {
    let most = |rows: &[Row], f: fn(&Row) -> u64| rows.iter().map(f).max().unwrap_or(0);
    let mib = |bytes: u64| bytes as f64 / f64::from(1 << 20);
    let (rss_first, rss_last) = (most(first, |r| r.rss), most(last, |r| r.rss));
    let rss_allowed = rss_first + rss_first / 4 + (8 << 20);
    let (fds_first, fds_last) = (most(first, |r| r.fds), most(last, |r| r.fds));
    vec![
        Verdict::new(
            rss_last <= rss_allowed,
            format!(
                "RSS: at most {:.1} MiB in the last half, allowed {:.1} (the first half's {:.1} + 25% + 8 MiB)",
                mib(rss_last),
                mib(rss_allowed),
                mib(rss_first)
            ),
        ),
        Verdict::new(
            fds_last <= fds_first + 16,
            format!(
                "open files: at most {fds_last} in the last half, allowed {} (the first half's {fds_first} + 16)",
                fds_first + 16
            ),
        ),
    ]
}

/// The database: rows bounded by what the retention keeps, sizes that stop growing.
fn db_bounds(args: &Args, first: &[Row], last: &[Row]) -> Vec<Verdict> {
    let most = |rows: &[Row], f: fn(&DbFigures) -> u64| {
        rows.iter()
            .filter_map(|r| r.db.as_ref())
            .map(f)
            .max()
            .unwrap_or(0)
    };
    let keyed = MIX
        .iter()
        .filter(|k| matches!(k, Kind::Fresh | Kind::Abandoned))
        .count() as u64;
    let per_s = args.rate * keyed / MIX.len() as u64;
    let rows_allowed = args.retention_s * per_s * 3 / 2 + 100;
    let rows_seen = most(first, |d| d.rows).max(most(last, |d| d.rows));
    let (keys_first, keys_last) = (most(first, |d| d.keys_bytes), most(last, |d| d.keys_bytes));
    let keys_allowed = keys_first + keys_first / 2 + (1 << 20);
    let mut verdicts = vec![
        Verdict::new(
            rows_seen <= rows_allowed,
            format!(
                "rows: at most {rows_seen} keys stored, allowed {rows_allowed} (retention {} s x {per_s} new keys/s x 1.5 + 100)",
                args.retention_s
            ),
        ),
        Verdict::new(
            keys_last <= keys_allowed,
            format!(
                "keys table: at most {} KiB in the last half, allowed {} (the first half's {} + 50% + 1 MiB)",
                keys_last / 1024,
                keys_allowed / 1024,
                keys_first / 1024
            ),
        ),
    ];
    if args.store == Store::Sqlite {
        let (wal_first, wal_last) = (most(first, |d| d.wal_bytes), most(last, |d| d.wal_bytes));
        let wal_allowed = wal_first + wal_first / 2 + (4 << 20);
        verdicts.push(Verdict::new(
            wal_last <= wal_allowed,
            format!(
                "log: at most {} KiB in the last half, allowed {} (the first half's {} + 50% + 4 MiB)",
                wal_last / 1024, wal_allowed / 1024, wal_first / 1024
            ),
        ));
    }
    verdicts
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

fn print_verdicts(verdicts: &[Verdict], traffic: &Traffic) {
    let window = traffic
        .window
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    for example in &window.examples {
        println!("  {example}");
    }
    println!();
    for verdict in verdicts {
        let mark = match verdict.held {
            Some(true) => "ok  ",
            Some(false) => "FAIL",
            None => "info",
        };
        println!("{mark} {}", verdict.what);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(store: &str) -> Args {
        Args::parse_from(["soak", "--payments", "payments", "--store", store])
    }

    /// A full minute's row at minute `n`: 100 requests/s, the given memory, files, keys and p99.
    fn row(n: u64, rss_mib: u64, fds: u64, keys: u64, p99_ms: u64) -> Row {
        Row {
            at: Duration::from_secs(60 * n),
            span: Duration::from_secs(60),
            started: 6000,
            requests: 6000,
            p50: Duration::from_millis(1),
            p99: Duration::from_millis(p99_ms),
            errors: 0,
            wrong: 0,
            rss: rss_mib << 20,
            fds,
            db: Some(DbFigures {
                rows: keys,
                keys_bytes: keys * 300,
                file_bytes: 1 << 20,
                wal_bytes: 4 << 20,
            }),
        }
    }

    fn steady(minutes: u64, rss: impl Fn(u64) -> u64, keys: impl Fn(u64) -> u64) -> Vec<Row> {
        (1..=minutes)
            .map(|n| row(n, rss(n), 30, keys(n), 20))
            .collect()
    }

    fn paid(effects: u64) -> Paid {
        Paid {
            charges: effects,
            effects,
            late: 0,
        }
    }

    fn failed(verdicts: &[Verdict]) -> Vec<&str> {
        verdicts
            .iter()
            .filter(|v| v.held == Some(false))
            .map(|v| v.what.as_str())
            .collect()
    }

    #[test]
    fn a_flat_run_keeps_every_bound() {
        let rows = steady(12, |_| 12, |_| 250);
        let verdicts = judge(&args("sqlite"), &rows, &paid(40_000));
        assert_eq!(failed(&verdicts), Vec::<&str>::new());
        assert!(
            verdicts.iter().all(|v| v.held == Some(true)),
            "every bound judged"
        );
    }

    #[test]
    fn memory_that_keeps_growing_fails() {
        let rows = steady(12, |n| 10 + 4 * n, |_| 250);
        let verdicts = judge(&args("sqlite"), &rows, &paid(40_000));
        let failed = failed(&verdicts);
        assert_eq!(failed.len(), 1, "{failed:?}");
        assert!(failed[0].starts_with("RSS"), "{failed:?}");
    }

    #[test]
    fn rows_past_the_retention_window_fail() {
        // 100 requests/s, 10 of 20 keyed: 50 new keys/s, 5 s kept: at most 5 x 50 x 1.5 + 100.
        let rows = steady(12, |_| 12, |n| if n == 9 { 476 } else { 250 });
        let verdicts = judge(&args("sqlite"), &rows, &paid(40_000));
        let failed = failed(&verdicts);
        assert_eq!(failed.len(), 1, "{failed:?}");
        assert!(
            failed[0].starts_with("rows: at most 476 keys stored, allowed 475"),
            "{failed:?}"
        );
    }

    #[test]
    fn a_charge_count_that_differs_fails() {
        let rows = steady(12, |_| 12, |_| 250);
        let paid = Paid {
            charges: 40_001,
            effects: 40_000,
            late: 0,
        };
        let failed = failed(&judge(&args("memory"), &rows, &paid)).join("\n");
        assert!(
            failed.starts_with("charges: 40001 on the server, 40000 paid for"),
            "{failed}"
        );
    }

    #[test]
    fn p99_drift_fails_a_long_run_and_is_only_shown_for_a_short_one() {
        let drifting = |minutes: u64| -> Vec<Row> {
            (1..=minutes)
                .map(|n| row(n, 12, 30, 250, if n > minutes / 2 { 200 } else { 20 }))
                .collect()
        };
        let long = judge(&args("memory"), &drifting(14), &paid(1));
        assert!(
            failed(&long).iter().any(|f| f.starts_with("p99")),
            "judged and failed"
        );
        let short = judge(&args("memory"), &drifting(6), &paid(1));
        let p99 = short
            .iter()
            .find(|v| v.what.starts_with("p99"))
            .expect("p99 line");
        assert_eq!(p99.held, None, "shown, not judged: {}", p99.what);
    }

    #[test]
    fn a_rate_that_was_not_kept_fails() {
        let mut rows = steady(12, |_| 12, |_| 250);
        for row in &mut rows {
            row.started = 4000; // 67 requests/s of the 100 asked for
        }
        let failed = failed(&judge(&args("memory"), &rows, &paid(1))).join("\n");
        assert!(failed.starts_with("rate: 66.7 requests/s"), "{failed}");
    }
}
