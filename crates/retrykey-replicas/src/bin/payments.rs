//! The payments server: the demo handler behind the idempotency layer, on a real socket, with
//! its keys and charges in memory or in a database that several replicas share.
//!
//! Every flag's value is checked before anything is opened: a bad one prints one line to
//! stderr and exits with status 2, and no database file is created.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use retrykey_crashpoints::pause_at;
use retrykey_http::payments::{Payments, is_payment};
use retrykey_http::{IdempotencyLayer, InFlight, StoreLimits};
use retrykey_program::Clock;
use retrykey_program::flags::{self, FlagError, Span};
use retrykey_replicas::crash::Point;
use retrykey_replicas::open::StoreChoiceError;
use retrykey_replicas::pg::DEFAULT_SCHEMA;
use retrykey_replicas::{Lease, Opened, PgEntries, PgPayments, StoreChoice, StoreOptions};
use retrykey_server::{Running, ServerLimits, Timeouts};
use tokio::net::TcpListener;
use tower_layer::Layer;

/// Serve `POST /payments` and `GET /payments/count` behind the Idempotency-Key layer.
#[derive(Debug, Parser)]
struct Args {
    /// Address to listen on (port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Where keys and charges live: memory, sqlite:PATH, or postgres (reads RETRYKEY_PG_URL).
    /// Replicas share an authority only on the same database.
    #[arg(long, value_name = "STORE", value_parser = store_choice, default_value = "memory")]
    store: StoreChoice,
    /// With postgres: the schema that holds the tables. Replicas share an authority only in
    /// the same schema.
    #[arg(long, value_name = "NAME", value_parser = flags::schema_name, default_value = DEFAULT_SCHEMA)]
    pg_schema: String,
    /// Most keys remembered at once; a fresh key beyond it gets 503 store-full.
    // Negative numbers are taken as values, so that `-1` is refused as a count, not as a flag.
    #[arg(long, value_name = "N", value_parser = flags::positive, default_value = "10000", allow_negative_numbers = true)]
    max_entries: usize,
    /// Most bytes of stored answers held at once.
    #[arg(long, value_name = "N", value_parser = flags::positive, default_value = "67108864", allow_negative_numbers = true)]
    max_bytes: usize,
    /// How long a finished key's answer is kept (500ms, 30s, 10m, 24h).
    #[arg(long, value_name = "DUR", default_value = "24h")]
    retention: Span,
    /// Database stores: how long a running request holds its key without renewal before
    /// another replica may take it over.
    #[arg(long, value_name = "DUR", default_value = "10s")]
    lease: Span,
    /// The name written into the keys this replica claims, unique per process (default:
    /// `pid <n> <tag>`, the tag random).
    #[arg(long, value_name = "NAME")]
    owner: Option<String>,
    /// Milliseconds each charge takes.
    #[arg(long, default_value_t = 50)]
    work_ms: u64,
    /// Answer duplicates of a running request with 409 instead of waiting for it.
    #[arg(long)]
    reject_in_flight: bool,
    /// Refuse `POST /payments` without an Idempotency-Key (400).
    #[arg(long)]
    require_key: bool,
    /// How long a client may take to send a request head (from its connection or its first
    /// byte); a slower one is disconnected.
    #[arg(long, value_name = "DUR", default_value = "10s")]
    header_timeout: Span,
    /// How long a client may take to send a request body after its head; a slower one gets 408.
    #[arg(long, value_name = "DUR", default_value = "30s")]
    body_timeout: Span,
    /// How long a kept-alive connection may sit without a request, or a reply without progress.
    #[arg(long, value_name = "DUR", default_value = "60s")]
    idle_timeout: Span,
    /// Most connections served at once; one more gets 503 too-many-connections and is closed.
    #[arg(long, value_name = "N", value_parser = flags::positive, default_value = "1024", allow_negative_numbers = true)]
    max_connections: usize,
    /// Largest request head (request line and headers) in bytes, at least 8192; a larger one
    /// gets 431.
    #[arg(long, value_name = "N", value_parser = flags::head_bytes, default_value = "65536", allow_negative_numbers = true)]
    max_head_bytes: usize,
    /// After SIGTERM or Ctrl-C: how long running requests may take before they are cut off
    /// (then the exit status is 1).
    #[arg(long, value_name = "DUR", default_value = "10s")]
    shutdown_deadline: Span,
    /// Crash tests: stop every keyed request at this point (database stores), after printing
    /// `paused at <point>`, so that the process can be killed exactly there.
    #[arg(long, value_name = "POINT", value_parser = pause_point, hide = true)]
    pause_at: Option<Point>,
    /// Tests: read the clock this far ahead, as a replica whose clock runs fast, that sees
    /// answers expired and leases lapsed before the others do.
    #[arg(long, value_name = "DUR", hide = true)]
    clock_ahead: Option<Span>,
}

/// A `--store` value; its refusal already says what was expected, as the flags' own do.
fn store_choice(text: &str) -> Result<StoreChoice, FlagError> {
    text.parse()
        .map_err(|error: StoreChoiceError| FlagError::Refused(error.to_string()))
}

/// The crash points, as `--pause-at` names them in a refusal, in the order a request passes them.
const POINT_NAMES: &str = "reserved, handler, charged or committed";

/// A crash point named by `--pause-at`.
fn pause_point(text: &str) -> Result<Point, FlagError> {
    Point::from_name(text).ok_or_else(|| FlagError::OneOf {
        expected: POINT_NAMES,
        got: text.to_owned(),
    })
}

impl Args {
    fn options(&self) -> StoreOptions {
        let defaults = StoreOptions::default();
        StoreOptions {
            limits: StoreLimits {
                max_entries: self.max_entries,
                max_bytes: self.max_bytes,
                retention: self.retention.0,
            },
            lease: Lease {
                duration: self.lease.0,
                ..defaults.lease
            },
            owner: self.owner.clone().unwrap_or(defaults.owner),
            clock: self
                .clock_ahead
                .map_or(defaults.clock, |ahead| Clock::ahead(ahead.0)),
        }
    }

    fn server_limits(&self) -> ServerLimits {
        ServerLimits {
            timeouts: Timeouts {
                head: self.header_timeout.0,
                body: self.body_timeout.0,
                idle: self.idle_timeout.0,
            },
            max_connections: self.max_connections,
            max_head_bytes: self.max_head_bytes,
            shutdown_deadline: self.shutdown_deadline.0,
        }
    }
}

fn main() -> ExitCode {
    let args = match retrykey_program::parse::<Args>("payments") {
        Ok(args) => args,
        Err(exit) => return exit,
    };
    // A panic that X-Panic asked for is the layer's to answer, not the terminal's to show.
    retrykey_http::payments::quiet_asked_panics();
    retrykey_program::run("payments", serve(args))
}

async fn serve(args: Args) -> anyhow::Result<()> {
    // Listening for SIGTERM and Ctrl-C from the start: a signal that comes as soon as the
    // address is printed stops the server gracefully too.
    let stop = retrykey_server::signalled();
    if let Some(point) = args.pause_at {
        pause_at(point.name()).map_err(anyhow::Error::msg)?;
    }
    let opened = match &args.store {
        StoreChoice::Postgres(url) => {
            let store = PgEntries::connect_in_schema(url, &args.pg_schema, args.options()).await;
            store.map(|store| Opened {
                ledger: Arc::new(PgPayments::new(&store)),
                store: Arc::new(store),
            })
        }
        other => other.open(args.options()).await,
    }
    .context("cannot open the store")?;
    let mut builder = IdempotencyLayer::builder().shared_store(opened.store);
    if args.reject_in_flight {
        builder = builder.in_flight(InFlight::Reject);
    }
    if args.require_key {
        builder = builder.require_key(is_payment);
    }
    let payments = Payments::with_ledger(Duration::from_millis(args.work_ms), opened.ledger);
    // Counted inside the layer, so that a payment whose client left (it runs on by itself)
    // still gets the shutdown deadline to finish.
    let running = Running::default();
    let service = builder.build().layer(running.track(payments.service()));

    let listener = TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    println!("listening on http://{}", listener.local_addr()?);
    let stopped = retrykey_server::serve(listener, service, args.server_limits(), stop).await;
    let unfinished = running.settle_by(stopped.deadline).await;
    println!(
        "stopped: charges={} attempts={}",
        payments.charges().await?,
        payments.attempts()
    );
    if stopped.cut_off > 0 || unfinished > 0 {
        anyhow::bail!(
            "the shutdown deadline passed: {} connection(s) cut off, {unfinished} payment(s) \
             still running",
            stopped.cut_off
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    // Every crash point can be named, and the refusal lists them all, in their order.
    #[test]
    fn pause_points_by_name() {
        for point in Point::ALL {
            assert_eq!(pause_point(point.name()), Ok(point));
        }
        let names: Vec<&str> = Point::ALL.iter().map(|point| point.name()).collect();
        let (last, rest) = names.split_last().expect("there are crash points");
        assert_eq!(POINT_NAMES, format!("{} or {last}", rest.join(", ")));
        assert_eq!(
            pause_point("later").unwrap_err().to_string(),
            r#"expected reserved, handler, charged or committed, got "later""#
        );
    }
}
