//! The checkout on a real socket, and its completer and reaper as subcommands.
//!
//! - `checkout serve --store STORE --provider URL`: prints `listening on http://ADDR` and serves
//!   `POST /checkouts` until SIGTERM or Ctrl-C; `--pause-at POINT` stops every checkout there
//!   (after printing `paused at POINT`) so that a test can kill the process exactly there.
//! - `checkout complete --store STORE --provider URL`: one run of the completer; prints what it did.
//! - `checkout reap --store STORE`: one run of the reaper; prints how many rows went.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::{Parser, Subcommand};
use retrykey_crashpoints::pause_at;
use retrykey_foreign::crash::{Hooks, Point};
use retrykey_foreign::{Books, Checkout, PgBooks, ProviderCall, SqliteBooks};
use retrykey_program::flags::{self, FlagError, Span};
use retrykey_replicas::open::StoreChoiceError;
use retrykey_replicas::pg::DEFAULT_SCHEMA;
use retrykey_replicas::{Lease, PgEntries, SqliteEntries, StoreChoice, StoreOptions};
use retrykey_server::ServerLimits;
use tokio::net::TcpListener;

/// A checkout in atomic phases, charging through a provider.
#[derive(Debug, Parser)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

/// What to run.
#[derive(Debug, Subcommand)]
enum Command {
    /// Serve `POST /checkouts` and `GET /orders`.
    Serve {
        #[command(flatten)]
        common: Common,
        /// Address to listen on (port 0 picks a free one).
        #[arg(long, default_value = "127.0.0.1:0")]
        listen: SocketAddr,
        /// How long a running checkout holds its key without renewal before a retry, or the
        /// completer, may take it over.
        #[arg(long, value_name = "DUR", default_value = "10s")]
        lease: Span,
        /// Crash tests: stop every checkout at this point, after printing `paused at <point>`.
        #[arg(long, value_name = "POINT", value_parser = pause_point, hide = true)]
        pause_at: Option<Point>,
    },
    /// Finish the operations whose clients left: one run.
    Complete {
        #[command(flatten)]
        common: Common,
        /// How long an operation must have stood still at its recovery point.
        #[arg(long, value_name = "DUR", default_value = "1m")]
        idle: Span,
        /// Most operations one run drives.
        #[arg(long, value_name = "N", value_parser = flags::positive, default_value = "100")]
        limit: usize,
    },
    /// Delete the rows of finished operations past retention: one run.
    Reap {
        #[command(flatten)]
        store: Store,
        /// How long a finished operation's row is kept.
        #[arg(long, value_name = "DUR", default_value = "24h")]
        retention: Span,
        /// Most rows one run deletes.
        #[arg(long, value_name = "N", value_parser = flags::positive, default_value = "1000")]
        limit: usize,
    },
}

/// What serving and completing share: the file, and the provider.
#[derive(Debug, clap::Args)]
struct Common {
    #[command(flatten)]
    store: Store,
    /// The provider's base URL.
    #[arg(long, value_name = "URL")]
    provider: String,
}

#[derive(Debug, clap::Args)]
struct Store {
    /// Where the keys, the orders and the operations live: sqlite:PATH, or postgres (reads
    /// RETRYKEY_PG_URL).
    #[arg(long, value_name = "STORE", value_parser = store_choice)]
    store: StoreChoice,
    /// With postgres: the schema that holds the tables.
    #[arg(long, value_name = "NAME", value_parser = flags::schema_name, default_value = DEFAULT_SCHEMA)]
    pg_schema: String,
}

impl Store {
    /// The checkout's books in the chosen store, its keys under `options`.
    async fn books(&self, options: StoreOptions) -> anyhow::Result<Box<dyn OpenBooks>> {
        let hooks = Hooks::none();
        Ok(match &self.store {
            StoreChoice::Sqlite(path) => {
                let store = SqliteEntries::open(path, options)
                    .with_context(|| format!("cannot open {}", path.display()))?;
                Box::new(SqliteBooks::open(store, hooks).await?)
            }
            StoreChoice::Postgres(url) => {
                let store = PgEntries::connect_in_schema(url, &self.pg_schema, options)
                    .await
                    .context("cannot reach PostgreSQL")?;
                Box::new(PgBooks::open(store, hooks).await?)
            }
            StoreChoice::Memory => {
                anyhow::bail!("the checkout needs a database: sqlite:PATH or postgres")
            }
        })
    }
}

/// Books of either database, boxed so that one checkout takes them.
trait OpenBooks: Books {
    fn into_checkout(self: Box<Self>, call: ProviderCall) -> Checkout;
}

impl<B: Books> OpenBooks for B {
    fn into_checkout(self: Box<Self>, call: ProviderCall) -> Checkout {
        Checkout::new(*self, call)
    }
}

fn store_choice(text: &str) -> Result<StoreChoice, StoreChoiceError> {
    StoreChoice::parse(text, std::env::var("RETRYKEY_PG_URL").ok())
}

/// The crash points, as `--pause-at` names them in a refusal, in the order a checkout passes them.
const POINT_NAMES: &str = "order-created, provider-answered, charge-recorded or order-confirmed";

fn pause_point(text: &str) -> Result<Point, FlagError> {
    Point::from_name(text).ok_or_else(|| FlagError::OneOf {
        expected: POINT_NAMES,
        got: text.to_owned(),
    })
}

fn main() -> ExitCode {
    let args = match retrykey_program::parse::<Args>("checkout") {
        Ok(args) => args,
        Err(exit) => return exit,
    };
    retrykey_program::run("checkout", run(args.command))
}

async fn open(common: &Common, options: StoreOptions) -> anyhow::Result<Checkout> {
    let books = common.store.books(options).await?;
    Ok(books.into_checkout(ProviderCall::to(&common.provider)))
}

async fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Serve {
            common,
            listen,
            lease,
            pause_at: point,
        } => {
            let stop = retrykey_server::signalled();
            if let Some(point) = point {
                pause_at(point.name()).map_err(anyhow::Error::msg)?;
            }
            let options = StoreOptions {
                lease: Lease {
                    duration: lease.0,
                    ..Lease::default()
                },
                ..StoreOptions::default()
            };
            let checkout = Arc::new(open(&common, options).await?);
            let listener = TcpListener::bind(listen)
                .await
                .with_context(|| format!("cannot listen on {listen}"))?;
            println!("listening on http://{}", listener.local_addr()?);
            let service = checkout.service();
            let stopped =
                retrykey_server::serve(listener, service, ServerLimits::default(), stop).await;
            if stopped.cut_off > 0 {
                anyhow::bail!("{} connection(s) cut off at the stop", stopped.cut_off);
            }
        }
        Command::Complete {
            common,
            idle,
            limit,
        } => {
            let checkout = open(&common, StoreOptions::default()).await?;
            let done = checkout.complete(idle.0, limit).await?;
            println!(
                "completed: finished={} unknown={} running={} done={}",
                done.finished, done.unknown, done.running, done.done
            );
        }
        Command::Reap {
            store,
            retention,
            limit,
        } => {
            let books = store.books(StoreOptions::default()).await?;
            let gone = books.reap(retention.0, limit).await?;
            println!("reaped: {gone}");
        }
    }
    Ok(())
}
