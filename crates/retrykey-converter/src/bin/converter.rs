//! The conversion service: the outbox's consumer (`retrykey-converter`), on a real socket, with
//! its conversions in a SQLite file or a PostgreSQL schema.
//!
//! Every flag's value is checked before anything is opened: a bad one prints one line to
//! stderr and exits with status 2, and no database is created.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::Parser;
use retrykey_converter::crash::Point;
use retrykey_converter::pg::DEFAULT_SCHEMA;
use retrykey_converter::{ConverterDb, service};
use retrykey_crashpoints::pause_at;
use retrykey_program::flags::{self, Database, FlagError};
use retrykey_server::ServerLimits;
use tokio::net::TcpListener;

/// Serve `POST /conversions` (one delivery of one outbox event) and `GET /conversions/count`.
#[derive(Debug, Parser)]
struct Args {
    /// Address to listen on (port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:8090")]
    listen: SocketAddr,
    /// Where conversions and their dedup records live: sqlite:PATH, or postgres (reads
    /// RETRYKEY_PG_URL).
    #[arg(long, value_name = "DB")]
    db: Database,
    /// With postgres: the schema that holds the tables.
    #[arg(long, value_name = "NAME", value_parser = flags::schema_name, default_value = DEFAULT_SCHEMA)]
    pg_schema: String,
    /// Fault tests: stop every delivery at this point, after printing `paused at <point>`, so
    /// that the process can be killed exactly there.
    #[arg(long, value_name = "POINT", value_parser = pause_point, hide = true)]
    pause_at: Option<Point>,
}

fn pause_point(text: &str) -> Result<Point, FlagError> {
    Point::from_name(text).ok_or_else(|| FlagError::OneOf {
        expected: "converted",
        got: text.to_owned(),
    })
}

fn main() -> ExitCode {
    let args = match retrykey_program::parse::<Args>("converter") {
        Ok(args) => args,
        Err(exit) => return exit,
    };
    retrykey_program::run("converter", serve(args))
}

async fn serve(args: Args) -> anyhow::Result<()> {
    // Listening for SIGTERM and Ctrl-C from the start, as the payments server does.
    let stop = retrykey_server::signalled();
    if let Some(point) = args.pause_at {
        pause_at(point.name()).map_err(anyhow::Error::msg)?;
    }
    let db = tokio::task::spawn_blocking(move || match &args.db {
        Database::Sqlite(path) => ConverterDb::open_sqlite(path),
        Database::Postgres(url) => ConverterDb::connect_postgres(url, &args.pg_schema),
    })
    .await?
    .context("cannot open the database")?;
    let db = Arc::new(db);
    let listener = TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    println!("listening on http://{}", listener.local_addr()?);
    let router = service::router(Arc::clone(&db));
    let stopped = retrykey_server::serve(listener, router, ServerLimits::default(), stop).await;
    let conversions = tokio::task::spawn_blocking(move || db.count()).await??;
    println!("stopped: conversions={conversions}");
    if stopped.cut_off > 0 {
        anyhow::bail!(
            "the shutdown deadline passed: {} connection(s) cut off with a request unfinished",
            stopped.cut_off
        );
    }
    Ok(())
}
