//! The payment provider on a real socket: its charges and keys in one SQLite file, the faults a
//! test queues with `POST /v1/faults`. Prints `listening on http://ADDR`, then serves until
//! SIGTERM or Ctrl-C.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use retrykey_foreign::provider::Provider;
use retrykey_replicas::{SqliteEntries, StoreOptions};
use retrykey_server::ServerLimits;
use tokio::net::TcpListener;

/// Serve `POST /v1/charges`, `GET /v1/charges` and `POST /v1/faults`.
#[derive(Debug, Parser)]
struct Args {
    /// Address to listen on (port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// The SQLite file that holds the provider's keys and charges.
    #[arg(long, value_name = "PATH")]
    db: PathBuf,
}

fn main() -> ExitCode {
    let args = match retrykey_program::parse::<Args>("provider") {
        Ok(args) => args,
        Err(exit) => return exit,
    };
    retrykey_program::run("provider", serve(args))
}

async fn serve(args: Args) -> anyhow::Result<()> {
    let stop = retrykey_server::signalled();
    let store = SqliteEntries::open(&args.db, StoreOptions::default())
        .with_context(|| format!("cannot open {}", args.db.display()))?;
    let provider = Provider::open(store)
        .await
        .context("cannot start the provider")?;
    let listener = TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    println!("listening on http://{}", listener.local_addr()?);
    let stopped =
        retrykey_server::serve(listener, provider.service(), ServerLimits::default(), stop).await;
    if stopped.cut_off > 0 {
        anyhow::bail!("{} connection(s) cut off at the stop", stopped.cut_off);
    }
    Ok(())
}
