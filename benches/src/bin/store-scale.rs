//! The HTTP store's key table at production size: the fresh key and the sweeper with 0, 1
//! million and 10 million answered keys held, half of them past retention.
//!
//! A service at 1,000 keyed requests a second with a day's retention holds about 86 million
//! keys. This run fills the key table of a store (`PgEntries` in a schema of its own, or
//! `SqliteEntries` in a temporary file) with set-based SQL, in batches: answered keys with the
//! payments answer, half of them expired within the last day, half kept for up to a day more,
//! their retention ends rising with the order of insertion as in a service's table.
//! The store's bounds stay exact: on PostgreSQL the filled schema's bound row is deleted and
//! the store opened again, so that its own start-up recounts the usage rows under their locks;
//! on SQLite each batch counts its entries, bytes and tokens in the usage row in the batch's
//! own transaction, as a claim does. At each size it then times fresh keys for a fixed number
//! of seconds while a sweeper (`sweep` of the store, in a loop, pausing only when it finds
//! nothing) deletes the expired half, and prints one line per size:
//!
//! `keys=N fresh_rps=X p50_ms=Y p99_ms=Z swept_per_s=W`
//!
//! A fresh key here is what the layer asks of its store for a key it has not seen, through
//! the store's public `Entries` API: `lookup` (absent), `reserve`, then `complete` with the
//! payments answer, from 8 concurrent callers. That is every statement a service pays on the
//! key table for a fresh key, and only those: the HTTP exchange and the handler's own rows do
//! not grow with the table, and measured with them (as `store-load` does) they would only
//! blur what the table's size and the sweeper cost. `swept_per_s` is the rate at which expired
//! records went while there were any (the expired rows counted before and after the window, by
//! the sweeper and the claims' own sweeps, over the window or its part until the sweeper
//! first found nothing left), to hold against `fresh_rps`, the rate at which keys arrive.
//! `failed=` and `sweeps_failed=` follow only when a fresh key or a sweep failed.
//!
//! Bounded: a fixed number of seconds per size and an overall deadline; the run stops nothing
//! but its own tasks, and drops its schema (or removes its file) at the end. Without
//! `RETRYKEY_PG_URL` the PostgreSQL run says it was skipped, and why, and measures nothing.
//!
//! `cargo run --release -p retrykey-benches --bin store-scale -- [postgres|sqlite] [--sizes 0,1000000,10000000] [--seconds S]`

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, anyhow, bail};
use clap::{Parser, ValueEnum};
use http::{Method, Uri};
use retrykey_http::payments::created;
use retrykey_http::{
    Entries, EntryId, Fingerprint, IdempotencyKey, Lookup, Reserve, Scope, StoreLimits,
};
use retrykey_replicas::record::ResponseColumns;
use retrykey_replicas::{PgEntries, SqliteEntries, StoreOptions};

const URL_VAR: &str = "RETRYKEY_PG_URL";
const BODY: &str = r#"{"amount":5}"#;
const DAY_MS: i64 = 24 * 60 * 60 * 1000;

#[derive(Debug, Parser)]
struct Args {
    /// The store to fill and time.
    #[arg(value_enum, default_value_t = Kind::Postgres)]
    store: Kind,
    /// Answered keys held at each measurement, half past retention (comma-separated, rising).
    #[arg(long, value_delimiter = ',', default_values_t = [0, 1_000_000, 10_000_000])]
    sizes: Vec<u64>,
    /// Seconds of fresh keys timed at each size, with the sweeper running.
    #[arg(long, default_value_t = 15)]
    seconds: u64,
    /// Concurrent callers making fresh keys.
    #[arg(long, default_value_t = 8)]
    concurrency: u64,
    /// Keys inserted per fill statement (each its own transaction).
    #[arg(long, default_value_t = 200_000)]
    fill_batch: u64,
    /// Give up (saying which sizes were not measured) after this many seconds.
    #[arg(long, default_value_t = 1800)]
    max_seconds: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Kind {
    Postgres,
    Sqlite,
}

/// The store under test.
#[derive(Clone)]
enum Store {
    Pg(PgEntries),
    Sqlite(SqliteEntries),
}

impl Store {
    fn entries(&self) -> &dyn Entries {
        match self {
            Store::Pg(store) => store,
            Store::Sqlite(store) => store,
        }
    }

    async fn sweep(&self) -> Result<u64, retrykey_http::Error> {
        match self {
            Store::Pg(store) => store.sweep().await,
            Store::Sqlite(store) => store.sweep().await,
        }
    }
}

/// Where the keys live, and how to fill them in.
enum Table {
    Pg {
        url: String,
        schema: String,
        client: tokio_postgres::Client,
    },
    Sqlite {
        path: PathBuf,
    },
}

/// The answered keys a table holds: kept, and past retention.
#[derive(Debug, Clone, Copy, Default)]
struct Held {
    live: u64,
    expired: u64,
}

/// One size's figures.
struct Measured {
    keys: u64,
    fresh: u64,
    window: Duration,
    latencies: Vec<Duration>,
    failed: u64,
    /// Expired records deleted during the window, by the sweeper and the claims' own sweeps.
    swept: u64,
    /// The window, or its part before the sweeper first found nothing expired.
    sweeping: Duration,
    sweeps_failed: u64,
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let deadline = Instant::now() + Duration::from_secs(args.max_seconds);
    let table = match args.store {
        Kind::Postgres => {
            let Some(url) = std::env::var(URL_VAR).ok().filter(|url| !url.is_empty()) else {
                println!(
                    "store-scale postgres: skipped ({URL_VAR} is not set: no server to fill); \
                     nothing was measured"
                );
                return Ok(());
            };
            Table::pg(&url).await?
        }
        Kind::Sqlite => Table::sqlite().await?,
    };
    let outcome = run(&args, &table, deadline).await;
    table.remove().await;
    outcome
}

/// Every size in turn: fill up to it, open the store, time the fresh key beside the sweeper.
async fn run(args: &Args, table: &Table, deadline: Instant) -> anyhow::Result<()> {
    let mut sizes = args.sizes.clone();
    sizes.sort_unstable();
    let next_key = Arc::new(AtomicU64::new(0));
    for (n, &size) in sizes.iter().enumerate() {
        let outcome = async {
            let held = table.fill_to(size, args.fill_batch, deadline).await?;
            let store = table.open().await?;
            eprintln!(
                "store-scale: {} live and {} expired keys held; timing fresh keys",
                held.live, held.expired
            );
            let measured = measure(args, table, &store, size, &next_key, deadline).await?;
            table.check_usage().await?;
            Ok::<_, anyhow::Error>(measured)
        }
        .await;
        match outcome {
            Ok(measured) => measured.print(),
            Err(error) if Instant::now() >= deadline => {
                for &size in &sizes[n..] {
                    println!(
                        "keys={size} not measured: the deadline of {} s was reached ({error:#})",
                        args.max_seconds
                    );
                }
                return Ok(());
            }
            Err(error) => return Err(error.context(format!("at {size} keys"))),
        }
    }
    Ok(())
}

impl Measured {
    fn print(&self) {
        let mut sorted = self.latencies.clone();
        sorted.sort_unstable();
        let ms = |q| retrykey_benches::latency_at(&sorted, q).as_secs_f64() * 1e3;
        let swept_per_s = self.swept as f64 / self.sweeping.as_secs_f64().max(1e-3);
        // Only when something failed: a figure that hides failures would claim too much.
        let mut failed = String::new();
        if self.failed > 0 {
            failed += &format!(" failed={}", self.failed);
        }
        if self.sweeps_failed > 0 {
            failed += &format!(" sweeps_failed={}", self.sweeps_failed);
        }
        println!(
            "keys={} fresh_rps={:.0} p50_ms={:.2} p99_ms={:.2} swept_per_s={:.0}{failed}",
            self.keys,
            self.fresh as f64 / self.window.as_secs_f64(),
            ms(0.50),
            ms(0.99),
            swept_per_s
        );
    }
}

/// Times fresh keys on `store` for `--seconds` while the sweeper runs beside them.
async fn measure(
    args: &Args,
    table: &Table,
    store: &Store,
    size: u64,
    next_key: &Arc<AtomicU64>,
    deadline: Instant,
) -> anyhow::Result<Measured> {
    // Connections, prepared statements and caches, untimed and without the sweeper.
    drive(
        store,
        next_key,
        args.concurrency,
        Duration::from_millis(500),
    )
    .await?;
    let held = table.held().await?;
    let left = deadline.saturating_duration_since(Instant::now());
    let window = Duration::from_secs(args.seconds).min(left);
    if window.is_zero() {
        bail!("no time left to time fresh keys");
    }
    let swept = Arc::new(Mutex::new(Swept::default()));
    let started = Instant::now();
    let sweeper = tokio::spawn(sweep_loop(store.clone(), Arc::clone(&swept)));
    let driven = drive(store, next_key, args.concurrency, window).await?;
    let ended = Instant::now();
    // Stopped mid-sweep: the chunk under way commits or not, whole, on the server.
    sweeper.abort();
    let _ = sweeper.await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let after = table.held().await?;
    let swept = std::mem::take(&mut *swept.lock().unwrap_or_else(PoisonError::into_inner));
    // Until the backlog was gone, if it went within the window: the rate while there was work.
    let sweeping = swept.cleared.unwrap_or(ended).min(ended) - started;
    Ok(Measured {
        keys: size,
        fresh: driven.latencies.len() as u64,
        window: ended - started,
        latencies: driven.latencies,
        failed: driven.failed,
        swept: held.expired.saturating_sub(after.expired),
        sweeping,
        sweeps_failed: swept.failed,
    })
}

/// What the sweeper did: when it first found nothing left to delete, and the sweeps that
/// failed.
#[derive(Default)]
struct Swept {
    cleared: Option<Instant>,
    failed: u64,
}

/// Sweeps until stopped, pausing a little whenever nothing was expired or a sweep failed (as a
/// service's sweeper would, trying again).
async fn sweep_loop(store: Store, swept: Arc<Mutex<Swept>>) {
    loop {
        let outcome = store.sweep().await;
        {
            let mut swept = swept.lock().unwrap_or_else(PoisonError::into_inner);
            match outcome {
                Ok(0) => {
                    swept.cleared.get_or_insert_with(Instant::now);
                }
                Ok(_) => continue,
                Err(error) => {
                    swept.failed += 1;
                    if swept.failed == 1 {
                        eprintln!("store-scale: a sweep failed: {error}");
                    }
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// What the callers did: each fresh key's latency, and the keys that failed.
struct Driven {
    latencies: Vec<Duration>,
    failed: u64,
}

/// Fresh keys from `concurrency` callers for `window`: lookup, reserve, complete.
async fn drive(
    store: &Store,
    next_key: &Arc<AtomicU64>,
    concurrency: u64,
    window: Duration,
) -> anyhow::Result<Driven> {
    let until = Instant::now() + window;
    let fingerprint = Fingerprint::of(
        &Method::POST,
        &Uri::from_static("/payments"),
        &Scope::Anonymous,
        Some("application/json"),
        BODY.as_bytes(),
    );
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let (store, next_key) = (store.clone(), Arc::clone(next_key));
        tasks.push(tokio::spawn(async move {
            let mut driven = Driven {
                latencies: Vec::new(),
                failed: 0,
            };
            while Instant::now() < until {
                let n = next_key.fetch_add(1, Ordering::Relaxed);
                let sent = Instant::now();
                match fresh_key(store.entries(), n, &fingerprint).await {
                    Ok(()) => driven.latencies.push(sent.elapsed()),
                    Err(error) => {
                        driven.failed += 1;
                        if driven.failed == 1 {
                            eprintln!("store-scale: a fresh key failed: {error:#}");
                        }
                    }
                }
            }
            driven
        }));
    }
    let mut all = Driven {
        latencies: Vec::new(),
        failed: 0,
    };
    for task in tasks {
        let driven = task.await?;
        all.latencies.extend(driven.latencies);
        all.failed += driven.failed;
    }
    Ok(all)
}

/// One fresh key, as the layer asks it of its store: absent, reserved, completed.
async fn fresh_key(store: &dyn Entries, n: u64, fingerprint: &Fingerprint) -> anyhow::Result<()> {
    let key = IdempotencyKey::parse(format!("scale-{n}").as_bytes())
        .map_err(|problem| anyhow!("{problem:?}"))?;
    let id = EntryId::new(&Scope::Anonymous, &key);
    if !matches!(store.lookup(&id).await?, Lookup::Absent) {
        bail!("key {n} was not absent");
    }
    let Reserve::Reserved(token) = store.reserve(&id, fingerprint).await? else {
        bail!("key {n} was not reserved");
    };
    store.complete(&id, token, created(n + 1)).await?;
    Ok(())
}

/// Bounds that let every key of the run in: ten times the largest size by default, 24 hours.
fn options() -> StoreOptions {
    StoreOptions {
        limits: StoreLimits {
            max_entries: 100_000_000,
            max_bytes: 1 << 40,
            retention: Duration::from_secs(24 * 60 * 60),
        },
        ..StoreOptions::default()
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
        })
}

/// The answer every filled key holds: the payments answer, as the stores write it.
fn answer() -> ResponseColumns {
    ResponseColumns::of(&created(1))
}

/// The rows still to add to reach `size` keys, half of them past retention.
fn wanted(size: u64, held: Held) -> Held {
    let expired = size / 2;
    Held {
        live: (size - expired).saturating_sub(held.live),
        expired: expired.saturating_sub(held.expired),
    }
}

/// Where filled keys' retention ends: `expired` ones within the last day (at least a minute
/// ago), the others within the next day (at least an hour away, past the run): the first
/// value and the span.
fn retention_window(expired: bool) -> (i64, i64) {
    let now = now_ms();
    if expired {
        (now - DAY_MS, DAY_MS - 60_000)
    } else {
        (now + 3_600_000, DAY_MS - 3_600_000)
    }
}

impl Table {
    async fn pg(url: &str) -> anyhow::Result<Self> {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .context("connect to PostgreSQL")?;
        tokio::spawn(connection);
        let schema = format!("rk_scale_{}", std::process::id());
        // Left over, perhaps, by an earlier run with the same process id.
        client
            .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
            .await?;
        let table = Table::Pg {
            url: url.to_owned(),
            schema,
            client,
        };
        table.open().await?; // creates the tables
        Ok(table)
    }

    async fn sqlite() -> anyhow::Result<Self> {
        let path =
            std::env::temp_dir().join(format!("retrykey-scale-{}.sqlite", std::process::id()));
        remove_sqlite(&path); // left over, perhaps, by an earlier run with the same process id
        let table = Table::Sqlite { path };
        table.open().await?; // creates the tables
        Ok(table)
    }

    /// The store over this table. On PostgreSQL its start-up recounts the usage rows when the
    /// bound row is missing, which `fill_to` deletes.
    async fn open(&self) -> anyhow::Result<Store> {
        Ok(match self {
            Table::Pg { url, schema, .. } => Store::Pg(
                PgEntries::connect_in_schema(url, schema, options())
                    .await
                    .context("open the PostgreSQL store")?,
            ),
            Table::Sqlite { path } => Store::Sqlite(
                SqliteEntries::open(path, options()).context("open the SQLite store")?,
            ),
        })
    }

    /// Adds answered keys until `size` are held, half past retention, in batches of `batch`.
    async fn fill_to(&self, size: u64, batch: u64, deadline: Instant) -> anyhow::Result<Held> {
        let started = Instant::now();
        let held = self.held().await?;
        let wanted = wanted(size, held);
        for (expired, total) in [(true, wanted.expired), (false, wanted.live)] {
            // Retention ends rise with the order of insertion, as they do in a service's
            // table: each batch takes the next slice of its day.
            let (from, span) = retention_window(expired);
            let mut done = 0;
            while done < total {
                if Instant::now() >= deadline {
                    bail!("filling the table to {size} keys");
                }
                let rows = (total - done).min(batch);
                let slice = |n: u64| {
                    from + i64::try_from(
                        u128::from(n) * span.unsigned_abs() as u128 / u128::from(total),
                    )
                    .unwrap_or(0)
                };
                self.insert(rows, slice(done), slice(done + rows) - slice(done))
                    .await?;
                done += rows;
            }
        }
        if wanted.live + wanted.expired > 0 {
            self.settle().await?;
            eprintln!(
                "store-scale: {} keys added in {:.0} s",
                wanted.live + wanted.expired,
                started.elapsed().as_secs_f64()
            );
        }
        self.held().await
    }

    /// Answered keys held, kept and expired.
    async fn held(&self) -> anyhow::Result<Held> {
        let now = now_ms();
        let (live, expired): (i64, i64) = match self {
            Table::Pg { schema, client, .. } => {
                let row = client
                    .query_one(
                        &format!(
                            "SELECT count(*) FILTER (WHERE expires_at > $1),
                                    count(*) FILTER (WHERE expires_at <= $1)
                             FROM {schema}.http_keys"
                        ),
                        &[&now],
                    )
                    .await?;
                (row.get(0), row.get(1))
            }
            Table::Sqlite { path } => {
                let conn = rusqlite::Connection::open(path)?;
                conn.query_row(
                    "SELECT count(*) FILTER (WHERE expires_at > ?1),
                            count(*) FILTER (WHERE expires_at <= ?1)
                     FROM http_keys",
                    [now],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )?
            }
        };
        Ok(Held {
            live: live.cast_unsigned(),
            expired: expired.cast_unsigned(),
        })
    }

    /// `rows` answered keys in one statement and transaction, their retention ending evenly
    /// from `from` over `span` milliseconds.
    async fn insert(&self, rows: u64, from: i64, span: i64) -> anyhow::Result<()> {
        let answer = answer();
        let rows = i64::try_from(rows)?;
        match self {
            Table::Pg { schema, client, .. } => {
                let sql = format!(
                    "INSERT INTO {schema}.http_keys
                         (entry_id, fingerprint, token, owner, expires_at, status, headers,
                          body, whole, size)
                     SELECT sha256(convert_to(g::text || ':' || $1::text, 'UTF8')), $2,
                            nextval('{schema}.http_keys_token'), 'store-scale',
                            $3::bigint + (g - 1) * $4::bigint / $10::bigint, $5, $6, $7, $8, $9
                     FROM generate_series(1, $10::bigint) AS g"
                );
                let tag = format!("{}-{}", now_ms(), rand_tag());
                client
                    .execute(
                        &sql,
                        &[
                            &tag,
                            &vec![7u8; 32], // a fingerprint: no filled key is asked for again
                            &from,
                            &span,
                            &answer.status,
                            &answer.headers,
                            &answer.body,
                            &answer.whole,
                            &answer.size,
                            &rows,
                        ],
                    )
                    .await?;
            }
            Table::Sqlite { path } => {
                let path = path.clone();
                tokio::task::spawn_blocking(move || sqlite_insert(&path, rows, from, span))
                    .await??;
            }
        }
        Ok(())
    }

    /// After a fill: on PostgreSQL, the statistics a day of autovacuum would have kept and the
    /// bound row deleted, so that the next open recounts the usage rows.
    async fn settle(&self) -> anyhow::Result<()> {
        if let Table::Pg { schema, client, .. } = self {
            // Two statements: VACUUM runs in no transaction block.
            client
                .batch_execute(&format!("VACUUM (ANALYZE) {schema}.http_keys"))
                .await?;
            client
                .batch_execute(&format!("DELETE FROM {schema}.http_keys_bound"))
                .await?;
        }
        Ok(())
    }

    /// Fails unless the usage rows hold exactly what the keys table does: the free room and
    /// the bytes of the entries held, after fills, claims, completions and sweeps.
    async fn check_usage(&self) -> anyhow::Result<()> {
        let max = i64::try_from(options().limits.max_entries)?;
        let (room, bytes, rows, size): (i64, i64, i64, i64) = match self {
            Table::Pg { schema, client, .. } => {
                let row = client
                    .query_one(
                        &format!(
                            "SELECT (SELECT sum(room)::bigint FROM {schema}.http_keys_usage),
                                    (SELECT sum(bytes)::bigint FROM {schema}.http_keys_usage),
                                    count(*), coalesce(sum(size), 0)::bigint
                             FROM {schema}.http_keys"
                        ),
                        &[],
                    )
                    .await?;
                (row.get(0), row.get(1), row.get(2), row.get(3))
            }
            Table::Sqlite { path } => {
                let conn = rusqlite::Connection::open(path)?;
                conn.query_row(
                    "SELECT ?1 - entries, bytes, (SELECT count(*) FROM http_keys),
                            (SELECT coalesce(sum(size), 0) FROM http_keys)
                     FROM http_keys_usage WHERE id = 0",
                    [max],
                    |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
                )?
            }
        };
        if room != max - rows {
            bail!("the usage rows drifted: room {room} for {rows} entries of {max}");
        }
        // The bytes are reported, not held: under concurrent completions the PostgreSQL store
        // loses a few answers' bytes from its count, with or without sweeps (see the book).
        let drift = if bytes == size {
            String::new()
        } else {
            format!(" (the usage rows count {bytes}, {} fewer)", size - bytes)
        };
        eprintln!("store-scale: room exact for {rows} entries; {size} bytes held{drift}");
        Ok(())
    }

    /// Drops the schema, or removes the file.
    async fn remove(&self) {
        match self {
            Table::Pg { schema, client, .. } => {
                let dropped = client
                    .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
                    .await;
                if let Err(error) = dropped {
                    eprintln!("store-scale: could not drop schema {schema}: {error}");
                }
            }
            Table::Sqlite { path } => remove_sqlite(path),
        }
    }
}

/// A few random hex digits, so that two fills never draw the same keys.
fn rand_tag() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(now_ms().cast_unsigned());
    format!("{:016x}", hasher.finish())
}

/// `rows` answered keys into the SQLite table, with their entries, bytes and tokens counted in
/// the usage row in the same transaction, as a claim and its completion count them.
fn sqlite_insert(path: &std::path::Path, rows: i64, from: i64, span: i64) -> anyhow::Result<()> {
    let answer = answer();
    let mut conn = rusqlite::Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(30))?;
    // The fill's own connection: a large cache, and no wait for the disk per batch.
    conn.pragma_update(None, "cache_size", -1_000_000)?;
    conn.pragma_update(None, "synchronous", "OFF")?;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let last: i64 = tx.query_row(
        "SELECT last_token FROM http_keys_usage WHERE id = 0",
        [],
        |row| row.get(0),
    )?;
    tx.execute(
        "WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?1)
         INSERT INTO http_keys
             (entry_id, fingerprint, token, owner, expires_at, status, headers, body, whole,
              size)
         SELECT randomblob(32), randomblob(32), ?2 + n, 'store-scale',
                ?3 + (n - 1) * ?4 / ?1, ?5, ?6, ?7, ?8, ?9
         FROM g",
        rusqlite::params![
            rows,
            last,
            from,
            span,
            answer.status,
            answer.headers,
            answer.body,
            answer.whole,
            answer.size
        ],
    )?;
    tx.execute(
        "UPDATE http_keys_usage SET last_token = last_token + ?1, entries = entries + ?1,
             bytes = bytes + ?1 * ?2
         WHERE id = 0",
        rusqlite::params![rows, answer.size],
    )?;
    tx.commit()?;
    Ok(())
}

fn remove_sqlite(path: &std::path::Path) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}
