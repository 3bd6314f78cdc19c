//! The checkout on a real socket, and its completer and reaper as subcommands.
//!
//! - `checkout serve --db PATH --provider URL`: prints `listening on http://ADDR` and serves
//!   `POST /checkouts` until SIGTERM or Ctrl-C; `--pause-at POINT` stops every checkout there
//!   (after printing `paused at POINT`) so that a test can kill the process exactly there.
//! - `checkout complete --db PATH --provider URL`: one run of the completer; prints what it did.
//! - `checkout reap --db PATH`: one run of the reaper; prints how many rows went.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::{Parser, Subcommand};
use retrykey_crashpoints::pause_at;
use retrykey_foreign::checkout::{Checkout, ProviderCall};
use retrykey_foreign::crash::Point;
use retrykey_program::flags::{self, FlagError, Span};
use retrykey_replicas::{Lease, SqliteEntries, StoreOptions};
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
        /// The SQLite file that holds the keys, the orders and the operations.
        #[arg(long, value_name = "PATH")]
        db: PathBuf,
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
    /// The SQLite file that holds the keys, the orders and the operations.
    #[arg(long, value_name = "PATH")]
    db: PathBuf,
    /// The provider's base URL.
    #[arg(long, value_name = "URL")]
    provider: String,
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
    let store = SqliteEntries::open(&common.db, options)
        .with_context(|| format!("cannot open {}", common.db.display()))?;
    Checkout::open(store, ProviderCall::to(&common.provider))
        .await
        .context("cannot start the checkout")
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
                "completed: finished={} unknown={} running={}",
                done.finished, done.unknown, done.running
            );
        }
        Command::Reap {
            db,
            retention,
            limit,
        } => {
            let store = SqliteEntries::open(&db, StoreOptions::default())
                .with_context(|| format!("cannot open {}", db.display()))?;
            // The reaper never calls the provider.
            let checkout = Checkout::open(store, ProviderCall::to("http://127.0.0.1:9"))
                .await
                .context("cannot open the checkout's tables")?;
            let gone = checkout.reap(retention.0, limit).await?;
            println!("reaped: {gone}");
        }
    }
    Ok(())
}
