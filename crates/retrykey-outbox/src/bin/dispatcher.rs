//! The dispatcher: a separate process that delivers the outbox's events to the consumer, at least
//! once, until SIGTERM or Ctrl-C.
//!
//! Every flag's value is checked before anything is opened: a bad one prints one line to
//! stderr and exits with status 2.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::Parser;
use retrykey_client::Policy;
use retrykey_crashpoints::pause_at;
use retrykey_outbox::crash::Point;
use retrykey_outbox::dispatcher::{Dispatcher, DispatcherOptions};
use retrykey_outbox::{DEFAULT_SCHEMA, DocumentsOptions, Marks, backend};
use retrykey_program::flags::{self, Database, FlagError, Span, positive};
use retrykey_server::signalled;

/// Deliver the outbox's events to the consumer, at least once each.
#[derive(Debug, Parser)]
struct Args {
    /// Where the outbox lives: sqlite:PATH, or postgres (reads RETRYKEY_PG_URL).
    #[arg(long, value_name = "DB")]
    db: Database,
    /// With postgres: the schema that holds the tables.
    #[arg(long, value_name = "NAME", value_parser = flags::schema_name, default_value = DEFAULT_SCHEMA)]
    pg_schema: String,
    /// The consumer's base URL.
    #[arg(long, value_name = "URL", value_parser = consumer_url)]
    consumer: String,
    /// The name written into this dispatcher's claims (default: `dispatcher pid <n>`).
    #[arg(long, value_name = "NAME")]
    owner: Option<String>,
    /// How long a claim is held; longer than a delivery's budget.
    #[arg(long, value_name = "DUR", default_value = "30s")]
    lease: Span,
    /// How many deliveries run at once; with a lease longer than two budgets, half as many
    /// more events are held claimed, ready to start.
    #[arg(long, value_name = "N", value_parser = positive, default_value = "16", allow_negative_numbers = true)]
    concurrency: usize,
    /// The longest wait before looking again when nothing was due (a sixteenth of it right
    /// after events were found, doubling with each look that finds none).
    #[arg(long, value_name = "DUR", default_value = "25ms")]
    poll: Span,
    /// Attempts per delivery, the first one included.
    #[arg(long, value_name = "N", value_parser = positive, default_value = "3", allow_negative_numbers = true)]
    attempts: usize,
    /// One delivery's whole budget, waits included.
    #[arg(long, value_name = "DUR", default_value = "10s")]
    budget: Span,
    /// The most one attempt may take.
    #[arg(long, value_name = "DUR", default_value = "3s")]
    attempt_timeout: Span,
    /// The first wait before an unsettled event is claimed again; it doubles per delivery.
    #[arg(long, value_name = "DUR", default_value = "1s")]
    redelivery_base: Span,
    /// The longest wait before an unsettled event is claimed again.
    #[arg(long, value_name = "DUR", default_value = "60s")]
    redelivery_cap: Span,
    /// How long delivered and failed events are kept.
    #[arg(long, value_name = "DUR", default_value = "24h")]
    keep_settled: Span,
    /// Print one line per settled delivery.
    #[arg(long)]
    log: bool,
    /// PostgreSQL: how a delivery's mark commits. `relaxed` does not wait for the disk, so a
    /// database crash may deliver the last fraction of a second's events once more.
    #[arg(long, value_name = "durable|relaxed", default_value = "durable", value_parser = marks)]
    marks: Marks,
    /// Seed the jitter of retries and redeliveries, so that a run repeats exactly.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Fault tests: stop every delivery at this point, after printing `paused at <point>`.
    #[arg(long, value_name = "POINT", value_parser = pause_point, hide = true)]
    pause_at: Option<Point>,
}

fn consumer_url(text: &str) -> Result<String, FlagError> {
    let rest = text.strip_prefix("http://").unwrap_or("");
    if rest.is_empty() || rest.contains(char::is_whitespace) {
        return Err(FlagError::OneOf {
            expected: "an http:// URL, as in http://127.0.0.1:8090",
            got: text.to_owned(),
        });
    }
    Ok(text.trim_end_matches('/').to_owned())
}

fn marks(text: &str) -> Result<Marks, FlagError> {
    Marks::from_name(text).ok_or_else(|| FlagError::OneOf {
        expected: "durable or relaxed",
        got: text.to_owned(),
    })
}

fn pause_point(text: &str) -> Result<Point, FlagError> {
    Point::from_name(text).ok_or_else(|| FlagError::OneOf {
        expected: "sent",
        got: text.to_owned(),
    })
}

impl Args {
    fn options(&self) -> anyhow::Result<DispatcherOptions> {
        let defaults = DispatcherOptions::new(self.consumer.clone());
        let attempts = u32::try_from(self.attempts).context("--attempts: too many")?;
        let policy = Policy::builder()
            .max_attempts(attempts)
            .budget(self.budget.0)
            .attempt_timeout(self.attempt_timeout.0)
            .build()
            .context("the delivery policy")?;
        let redelivery = Policy::builder()
            .base(self.redelivery_base.0)
            .cap(self.redelivery_cap.0)
            .build()
            .context("the redelivery schedule")?;
        Ok(DispatcherOptions {
            owner: self.owner.clone().unwrap_or(defaults.owner.clone()),
            lease: self.lease.0,
            concurrency: self.concurrency,
            poll: self.poll.0,
            policy,
            redelivery,
            keep_settled: self.keep_settled.0,
            log: self.log,
            seed: self.seed,
            ..defaults
        })
    }
}

fn main() -> ExitCode {
    let args = match retrykey_program::parse::<Args>("dispatcher") {
        Ok(args) => args,
        Err(exit) => return exit,
    };
    let options = match args.options().and_then(|options| {
        options.check()?;
        Ok(options)
    }) {
        Ok(options) => options,
        Err(error) => {
            eprintln!("dispatcher: {error:#}");
            return ExitCode::from(2);
        }
    };
    retrykey_program::run("dispatcher", dispatch(args, options))
}

async fn dispatch(args: Args, options: DispatcherOptions) -> anyhow::Result<()> {
    if let Some(point) = args.pause_at {
        pause_at(point.name()).map_err(anyhow::Error::msg)?;
    }
    let db = args.db.clone();
    let documents_options = DocumentsOptions {
        pg_schema: args.pg_schema.clone(),
        marks: args.marks,
        ..DocumentsOptions::default()
    };
    let outbox = tokio::task::spawn_blocking(move || backend::open(&db, documents_options))
        .await?
        .context("cannot open the outbox")?;
    let owner = options.owner.clone();
    let consumer = options.consumer.clone();
    let dispatcher = Dispatcher::new(Arc::from(outbox), options)?;
    println!("dispatching to {consumer} as {owner}");
    let tally = dispatcher.run(signalled()).await;
    println!(
        "stopped: claimed={} delivered={} replayed={} postponed={} rejected={} superseded={} failed={}",
        tally.claimed,
        tally.delivered,
        tally.replayed,
        tally.postponed,
        tally.rejected,
        tally.superseded,
        tally.failed
    );
    Ok(())
}
