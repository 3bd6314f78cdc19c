//! The outbox under loopback load, against PostgreSQL's own speed measured in the same run.
//!
//! Per backend (PostgreSQL, SQLite), on fresh databases, with a consumer behind a real loopback
//! server and a dispatcher in this process:
//!
//! 1. **Accepting**: `--jobs` jobs accepted by `--concurrency` threads, each job with its event
//!    in one transaction: jobs per second, for the first half in one ledger scope and for the
//!    second half spread over `--scopes` scopes (tenants). A scope's ledger row orders its jobs,
//!    so one scope commits one job at a time: the first figure is that wall.
//! 2. **Dispatching**: the dispatcher delivers that backlog with `--concurrency` deliveries at
//!    once: events per second, from the moment a tenth of the backlog is converted to the last
//!    conversion. The first tenth opens the connections and prepares the statements, which
//!    pgbench leaves out of its own figure too ("without initial connection time").
//! 3. **End to end**: jobs offered at a fixed `--rate` for `--seconds` while the dispatcher runs;
//!    for each job, the time from its acceptance to its conversion (both databases note the
//!    millisecond): p50 and p99.
//!
//! Between them it runs `pgbench -N` with as many clients on the same server, for its
//! transactions per second and the p50 and p99 of its transactions, and prints each figure's
//! ratio to it. Bounded: fixed job counts, a fixed offered load, and a hard time cap. Without
//! `RETRYKEY_PG_URL` the PostgreSQL parts are skipped and named.
//!
//! `cargo run --release -p retrykey-benches --bin outbox-load -- [--jobs N] [--concurrency C] [--scopes K] [--marks durable|relaxed] [--rate R] [--seconds S] [--backends postgres,sqlite]`

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Parser;
use retrykey::{Key, Request};
use retrykey_converter::{ConverterDb, service};
use retrykey_durable::pg::url_from_env;
use retrykey_outbox::dispatcher::{Dispatcher, DispatcherOptions};
use retrykey_outbox::store::wait;
use retrykey_outbox::{DocumentsOptions, Marks, OutboxStore};
use retrykey_outbox_checks::faults::Place;
use retrykey_server::loopback::Server;
use retrykey_testkit::pgbench::{self, quantile};

#[derive(Debug, Parser)]
struct Args {
    /// Jobs in the backlog the dispatcher delivers: enough for a dispatch about as long as
    /// pgbench's run, so that a burst of outside load weighs on both alike.
    #[arg(long, default_value_t = 6000)]
    jobs: usize,
    /// Accepting threads, deliveries at once, and pgbench's clients.
    #[arg(long, default_value_t = 8)]
    concurrency: usize,
    /// Jobs offered per second in the end-to-end run.
    #[arg(long, default_value_t = 200)]
    rate: u64,
    /// Seconds of the end-to-end run.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// Seconds of each pgbench run.
    #[arg(long, default_value_t = 5)]
    pgbench_seconds: u64,
    /// Ledger scopes (tenants) the second half of the backlog is spread over, each accepting
    /// thread in one; the first half is accepted in one scope. A scope commits one job at a
    /// time, since its ledger row orders them: the two figures show that wall.
    #[arg(long, default_value_t = 8)]
    scopes: usize,
    /// How the dispatcher's marks commit on PostgreSQL: durable (the default) or relaxed
    /// (not waiting for the disk; a database crash redelivers the last moment's events).
    #[arg(long, default_value = "durable", value_parser = ["durable", "relaxed"])]
    marks: String,
    /// Only these backends (comma-separated: postgres, sqlite); default both.
    #[arg(long, value_delimiter = ',')]
    backends: Vec<String>,
    /// Give up after this many seconds: the backend still running stops, named, and the rest is
    /// skipped.
    #[arg(long, default_value_t = 300)]
    max_seconds: u64,
}

/// The figures of one backend.
struct Measured {
    accepted_per_s: f64,
    spread_per_s: f64,
    delivered_per_s: f64,
    latency_ms: Vec<f64>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if args.concurrency == 0 || args.rate == 0 || args.seconds == 0 || args.scopes == 0 {
        bail!("--concurrency, --rate, --seconds and --scopes must be at least 1");
    }
    let deadline = Instant::now() + Duration::from_secs(args.max_seconds);
    let url = url_from_env();
    let backends: Vec<&str> = if args.backends.is_empty() {
        vec!["postgres", "sqlite"]
    } else {
        args.backends.iter().map(String::as_str).collect()
    };
    for backend in &backends {
        if !matches!(*backend, "postgres" | "sqlite") {
            bail!("--backends takes postgres and sqlite, not {backend:?}");
        }
    }
    println!(
        "outbox-load: {} jobs backlog, {} at once (accepting threads, deliveries, pgbench clients); \
         end to end {} jobs/s for {} s; dispatcher poll at most 25 ms; {} marks; {} cores",
        args.jobs,
        args.concurrency,
        args.rate,
        args.seconds,
        args.marks,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let reference = match &url {
        Some(url) => {
            pgbench::prepare(url)?;
            let run = pgbench::logged(url, "-N", args.concurrency, args.pgbench_seconds)?;
            println!(
                "pgbench -N, {} clients: {:.0} tps, p50 {:.1} ms, p99 {:.1} ms",
                args.concurrency,
                run.tps,
                quantile(&run.latencies_ms, 0.5),
                quantile(&run.latencies_ms, 0.99)
            );
            Some(run)
        }
        None => {
            println!("PostgreSQL and pgbench: skipped (RETRYKEY_PG_URL is not set)");
            None
        }
    };
    let mut stopped = 0;
    for backend in backends {
        if backend == "postgres" && url.is_none() {
            continue;
        }
        if Instant::now() >= deadline {
            println!("{backend}: skipped (past --max-seconds)");
            continue;
        }
        // A fresh place for each of the two runs.
        let place = || match &url {
            Some(url) if backend == "postgres" => Place::postgres(url),
            _ => Place::sqlite(),
        };
        let measured = match measure(&args, place, deadline) {
            Ok(measured) => measured,
            Err(error) => {
                println!("{backend}: stopped: {error:#}");
                stopped += 1;
                continue;
            }
        };
        let ratio = |figure: f64| {
            reference.as_ref().map_or(String::new(), |run| {
                format!(" ({:.0}% of pgbench -N)", 100.0 * figure / run.tps)
            })
        };
        println!("{backend}:");
        println!(
            "  accept (job and event, one transaction), one scope: {:.0} jobs/s{}",
            measured.accepted_per_s,
            ratio(measured.accepted_per_s)
        );
        println!(
            "  accept, jobs spread over {} scopes: {:.0} jobs/s{}",
            args.scopes,
            measured.spread_per_s,
            ratio(measured.spread_per_s)
        );
        println!(
            "  dispatch (claim, deliver, consumer converts, mark): {:.0} events/s{}",
            measured.delivered_per_s,
            ratio(measured.delivered_per_s)
        );
        let (p50, p99) = (
            quantile(&measured.latency_ms, 0.5),
            quantile(&measured.latency_ms, 0.99),
        );
        let against = reference.as_ref().map_or(String::new(), |run| {
            format!(
                " ({:.1}x and {:.1}x pgbench -N's p50 and p99)",
                p50 / quantile(&run.latencies_ms, 0.5),
                p99 / quantile(&run.latencies_ms, 0.99)
            )
        });
        println!(
            "  accepted to converted at {} jobs/s: p50 {p50:.0} ms, p99 {p99:.0} ms over {} jobs{against}",
            args.rate,
            measured.latency_ms.len()
        );
    }
    if stopped > 0 {
        bail!("{stopped} backend(s) not measured");
    }
    Ok(())
}

/// The two databases of a fresh place, opened as the load needs them.
fn open(place: &Place, args: &Args) -> (Arc<dyn OutboxStore>, Arc<ConverterDb>) {
    // SQLite refuses relaxed marks: its rows are measured with durable ones.
    let marks = match Marks::from_name(&args.marks) {
        Some(Marks::Relaxed) if place.backend == "postgres" => Marks::Relaxed,
        _ => Marks::Durable,
    };
    (
        Arc::from(place.open_documents_with(DocumentsOptions {
            marks,
            ..DocumentsOptions::default()
        })),
        Arc::new(place.open_consumer()),
    )
}

fn measure(args: &Args, place: impl Fn() -> Place, deadline: Instant) -> anyhow::Result<Measured> {
    // 1 and 2: a backlog accepted, then delivered.
    let backlog = place();
    let (documents, consumer) = open(&backlog, args);
    let half = args.jobs / 2;
    let started = Instant::now();
    accept_backlog(&[Arc::clone(&documents)], 0..half, args.concurrency)?;
    let accepted_per_s = half as f64 / started.elapsed().as_secs_f64();
    let tenants = tenants(&backlog, args);
    let started = Instant::now();
    accept_backlog(&tenants, half..args.jobs, args.concurrency)?;
    let spread_per_s = (args.jobs - half) as f64 / started.elapsed().as_secs_f64();
    drop(tenants);
    let runtime = tokio::runtime::Runtime::new()?;
    let delivered_per_s = runtime.block_on(dispatch(
        &documents, &consumer, args, args.jobs, None, deadline,
    ))?;
    drop((documents, consumer, backlog));

    // 3: jobs offered at a fixed rate while the dispatcher runs.
    let offered_place = place();
    let (documents, consumer) = open(&offered_place, args);
    let offered = (args.rate * args.seconds) as usize;
    let feeding = Arc::clone(&documents);
    let interval = Duration::from_secs_f64(1.0 / args.rate as f64);
    let feeder = std::thread::spawn(move || -> anyhow::Result<()> {
        let start = Instant::now();
        for n in 0..offered {
            // Open loop: the n-th job is due at n intervals, however long the others took.
            if let Some(wait) = (start + interval * n as u32).checked_duration_since(Instant::now())
            {
                std::thread::sleep(wait);
            }
            accept(&feeding, &format!("offered-{n}"))?;
        }
        Ok(())
    });
    runtime.block_on(dispatch(
        &documents,
        &consumer,
        args,
        offered,
        Some(feeder),
        deadline,
    ))?;
    let accepted: std::collections::HashMap<String, i64> = wait(documents.events())?
        .into_iter()
        .map(|row| (row.event.id.to_string(), row.accepted_at_ms))
        .collect();
    let mut latency_ms: Vec<f64> = consumer
        .list()?
        .into_iter()
        .filter_map(|c| Some((c.converted_at_ms - accepted.get(&c.event)?) as f64))
        .collect();
    latency_ms.sort_by(f64::total_cmp);
    Ok(Measured {
        accepted_per_s,
        spread_per_s,
        delivered_per_s,
        latency_ms,
    })
}

fn accept(documents: &Arc<dyn OutboxStore>, key: &str) -> anyhow::Result<()> {
    let request = Request::new("report.docx", 1)?;
    wait(documents.accept(&Key::new(key)?, &request))
        .with_context(|| format!("accepting {key}"))?;
    Ok(())
}

/// One handle per scope on the place's database, the accepting threads' connections shared
/// out among them.
fn tenants(place: &Place, args: &Args) -> Vec<Arc<dyn OutboxStore>> {
    (0..args.scopes)
        .map(|n| {
            Arc::from(place.open_documents_with(DocumentsOptions {
                scope: format!("tenant-{n}"),
                pg_connections: args.concurrency.div_ceil(args.scopes),
                ..DocumentsOptions::default()
            }))
        })
        .collect()
}

/// Accepts the jobs numbered `jobs` with `threads` threads, thread `t` in scope `t` of
/// `tenants` (round the list).
fn accept_backlog(
    tenants: &[Arc<dyn OutboxStore>],
    jobs: std::ops::Range<usize>,
    threads: usize,
) -> anyhow::Result<()> {
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let documents = &tenants[t % tenants.len()];
                scope.spawn(move || -> anyhow::Result<()> {
                    for n in (jobs.start + t..jobs.end).step_by(threads) {
                        accept(documents, &format!("backlog-{n}"))?;
                    }
                    Ok(())
                })
            })
            .collect();
        workers
            .into_iter()
            .try_for_each(|worker| worker.join().expect("an accepting thread"))
    })
}

/// Runs a dispatcher until the consumer holds `expected` conversions, or until `deadline`;
/// events per second from its start. With a `feeder`, also waits for it.
async fn dispatch(
    documents: &Arc<dyn OutboxStore>,
    consumer: &Arc<ConverterDb>,
    args: &Args,
    expected: usize,
    feeder: Option<std::thread::JoinHandle<anyhow::Result<()>>>,
    deadline: Instant,
) -> anyhow::Result<f64> {
    let server = Server::start(service::router(Arc::clone(consumer))).await?;
    let options = DispatcherOptions {
        concurrency: args.concurrency,
        seed: Some(1),
        ..DispatcherOptions::new(server.url())
    };
    let dispatcher = Dispatcher::new(Arc::clone(documents), options)?;
    // When the first tenth was converted, and how many that was: the clock starts there.
    let warm_up = expected / 10;
    let warmed: Arc<std::sync::Mutex<Option<(Instant, usize)>>> = Arc::default();
    let watching = {
        let (consumer, warmed) = (Arc::clone(consumer), Arc::clone(&warmed));
        async move {
            loop {
                tokio::time::sleep(Duration::from_millis(20)).await;
                let db = Arc::clone(&consumer);
                let count = match tokio::task::spawn_blocking(move || db.count()).await {
                    Ok(Ok(n)) => n as usize,
                    _ => 0,
                };
                let mut warmed = warmed.lock().expect("the watcher alone writes it");
                if warmed.is_none() && count >= warm_up {
                    *warmed = Some((Instant::now(), count));
                }
                if count >= expected || Instant::now() >= deadline {
                    return;
                }
            }
        }
    };
    let started = Instant::now();
    let tally = dispatcher.run(watching).await;
    let (from, counted) = warmed
        .lock()
        .expect("the watcher has ended")
        .unwrap_or((started, 0));
    let elapsed = from.elapsed().as_secs_f64();
    server.stop().await;
    if let Some(feeder) = feeder {
        feeder.join().expect("the feeding thread")?;
    }
    if tally.delivered < expected {
        bail!(
            "delivered {} of {expected} events before --max-seconds",
            tally.delivered
        );
    }
    Ok(tally.delivered.saturating_sub(counted) as f64 / elapsed)
}
