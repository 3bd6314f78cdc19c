//! The operator's command: what is still uncertain, and the two actions that settle it.
//!
//! `reconcile list` prints the uncertain operations (text, or JSON with `--json`);
//! `reconcile redrive EVENT` makes an event due for delivery now; `reconcile fail EVENT
//! --reason TEXT` settles it as failed. Both actions are idempotent, and refuse what would
//! contradict the records. A bad value prints one line and exits with 2, nothing opened; a
//! refusal (an unknown event, one already delivered ...) prints one line and exits with 1,
//! nothing changed.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use retrykey_converter::ConverterDb;
use retrykey_outbox::output;
use retrykey_outbox::store::{OutboxStore, wait};
use retrykey_outbox::{
    Acted, ActionError, DEFAULT_SCHEMA, DocumentsOptions, backend, check_reason,
};
use retrykey_program::flags::{self, Database, Span};

/// List the operations whose outcome is uncertain, re-drive an event, or mark it failed.
#[derive(Debug, Parser)]
struct Args {
    /// Where the outbox lives: sqlite:PATH, or postgres (reads RETRYKEY_PG_URL).
    #[arg(long, value_name = "DB", global = true)]
    db: Option<Database>,
    /// With postgres: the outbox's schema.
    #[arg(long, value_name = "NAME", value_parser = flags::schema_name, default_value = DEFAULT_SCHEMA, global = true)]
    pg_schema: String,
    /// The consumer's database, to find conversions the outbox has no acknowledgement of.
    #[arg(long, value_name = "DB", global = true)]
    consumer_db: Option<Database>,
    /// With a postgres consumer: its schema.
    #[arg(long, value_name = "NAME", value_parser = flags::schema_name, default_value = retrykey_converter::pg::DEFAULT_SCHEMA, global = true)]
    consumer_pg_schema: String,
    /// Print JSON instead of text.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The operations whose outcome is still uncertain.
    List {
        /// List undelivered jobs accepted longer ago than this.
        #[arg(long, value_name = "DUR", default_value = "60s")]
        after: Span,
    },
    /// Make an event due for delivery now (a rejected one, one waiting out its backoff, one
    /// whose claim lapsed).
    Redrive {
        /// The event's id.
        event: String,
    },
    /// Settle an event as failed: it will not be delivered.
    Fail {
        /// The event's id.
        event: String,
        /// Why, for the record (1 to 200 characters).
        #[arg(long)]
        reason: String,
    },
}

fn main() -> ExitCode {
    let args = match retrykey_program::parse::<Args>("reconcile") {
        Ok(args) => args,
        Err(exit) => return exit,
    };
    let Some(db) = &args.db else {
        return refuse(2, "--db is required: sqlite:PATH or postgres");
    };
    if let Command::Fail { reason, .. } = &args.command
        && let Err(error) = check_reason(reason)
    {
        return refuse(2, &format!("--reason: {error}"));
    }
    let options = DocumentsOptions {
        pg_schema: args.pg_schema.clone(),
        ..DocumentsOptions::default()
    };
    let outbox = match backend::open(db, options) {
        Ok(outbox) => outbox,
        Err(error) => return refuse(1, &error.to_string()),
    };
    let consumer = match &args.consumer_db {
        None => None,
        Some(Database::Sqlite(path)) => Some(ConverterDb::open_sqlite(path)),
        Some(Database::Postgres(url)) => {
            Some(ConverterDb::connect_postgres(url, &args.consumer_pg_schema))
        }
    };
    let consumer = match consumer.transpose() {
        Ok(consumer) => consumer,
        Err(error) => return refuse(1, &format!("the consumer's database: {error}")),
    };
    let outbox = outbox.as_ref();
    match &args.command {
        Command::List { after } => list(outbox, consumer.as_ref(), after, args.json),
        Command::Redrive { event } => acted(
            args.json,
            "redrive",
            wait(outbox.redrive(event)).map_err(retrykey_reconcile::Error::from),
        ),
        Command::Fail { event, reason } => acted(
            args.json,
            "fail",
            retrykey_reconcile::mark_failed(outbox, consumer.as_ref(), event, reason),
        ),
    }
}

fn list(
    outbox: &dyn OutboxStore,
    consumer: Option<&ConverterDb>,
    after: &Span,
    json: bool,
) -> ExitCode {
    match retrykey_reconcile::report(outbox, consumer, after.0) {
        Ok(report) if json => output::printed(
            "reconcile",
            &format!(
                "{}\n",
                serde_json::to_string_pretty(&report).expect("a report serializes")
            ),
        ),
        Ok(report) => output::printed("reconcile", &retrykey_reconcile::text(&report)),
        Err(error) => refuse(1, &error.to_string()),
    }
}

fn acted(
    json: bool,
    action: &str,
    result: Result<Result<Acted, ActionError>, retrykey_reconcile::Error>,
) -> ExitCode {
    match result {
        Ok(Ok(acted)) if json => output::printed(
            "reconcile",
            &format!(
                "{}\n",
                serde_json::to_string_pretty(&acted).expect("an action serializes")
            ),
        ),
        Ok(Ok(acted)) => {
            output::printed("reconcile", &retrykey_reconcile::acted_text(action, &acted))
        }
        Ok(Err(refused)) => refuse(1, &format!("{action}: {refused}; nothing changed")),
        Err(error) => refuse(1, &format!("{action}: {error}")),
    }
}

/// Prints `text`; a failed write is the program's failure.
fn refuse(code: u8, line: &str) -> ExitCode {
    eprintln!("reconcile: {line}");
    ExitCode::from(code)
}
