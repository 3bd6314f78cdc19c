//! The document service's command line: accept a conversion job under an operation key, and
//! list the jobs' events.
//!
//! `documents accept` is the service's one write. Its key makes it safe to repeat: run it again
//! with the same key (after a timeout, say) and it answers what the first run committed, writing
//! nothing. A bad value prints one line to stderr and exits with status 2, with nothing
//! created; a refusal (the key was used for another job, the ledger is full) exits with 1.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use retrykey::{Key, Request};
use retrykey_outbox::output::{self, age};
use retrykey_outbox::store::{OutboxStore, wait};
use retrykey_outbox::{DEFAULT_SCHEMA, DEFAULT_SCOPE, DocumentsOptions, backend};
use retrykey_program::flags::{self, Database};

/// Accept conversion jobs into the outbox, and list their events.
#[derive(Debug, Parser)]
struct Args {
    /// Where the ledger and the outbox live: sqlite:PATH, or postgres (reads RETRYKEY_PG_URL).
    #[arg(long, value_name = "DB", global = true)]
    db: Option<Database>,
    /// With postgres: the schema that holds the tables.
    #[arg(long, value_name = "NAME", value_parser = flags::schema_name, default_value = DEFAULT_SCHEMA, global = true)]
    pg_schema: String,
    /// The ledger scope (tenant) jobs are accepted in.
    #[arg(long, value_name = "NAME", default_value = DEFAULT_SCOPE, global = true)]
    scope: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Accept one job: the job and its outgoing event commit together.
    Accept {
        /// The operation key: the same on every retry of this one job.
        #[arg(long)]
        key: String,
        /// The job name (the document to convert).
        #[arg(long)]
        job: String,
        /// How many units of work the job is.
        #[arg(long, allow_negative_numbers = true)]
        units: String,
    },
    /// Every job's event and where it stands.
    Events,
}

fn main() -> ExitCode {
    let args = match retrykey_program::parse::<Args>("documents") {
        Ok(args) => args,
        Err(exit) => return exit,
    };
    let Some(db) = &args.db else {
        return refuse("--db is required: sqlite:PATH or postgres");
    };
    // Check the input before the database is opened, so that a bad one creates nothing.
    let accept = match &args.command {
        Command::Accept { key, job, units } => {
            let key = match Key::new(key.as_str()) {
                Ok(key) => key,
                Err(error) => return refuse(&format!("--key: {error}")),
            };
            match Request::parse(job.as_str(), units) {
                Ok(job) => Some((key, job)),
                Err(error) => return refuse(&error.to_string()),
            }
        }
        Command::Events => None,
    };
    let options = DocumentsOptions {
        scope: args.scope.clone(),
        pg_schema: args.pg_schema.clone(),
        // One job or one listing per run: one login.
        pg_connections: 1,
        ..DocumentsOptions::default()
    };
    let outbox = match backend::open(db, options) {
        Ok(outbox) => outbox,
        Err(error) => {
            eprintln!("documents: {error}");
            return ExitCode::FAILURE;
        }
    };
    match accept {
        Some((key, job)) => run_accept(outbox.as_ref(), &key, &job),
        None => run_events(outbox.as_ref()),
    }
}

fn run_accept(outbox: &dyn OutboxStore, key: &Key, job: &Request) -> ExitCode {
    match wait(outbox.accept(key, job)) {
        Ok(accepted) => {
            let receipt = accepted.receipt;
            let how = if receipt.replayed {
                "replayed (the key's first answer; nothing written)"
            } else {
                "accepted"
            };
            output::printed(
                "documents",
                &format!(
                    "{how}: job {} ({}, {} units) under key {key}, event {}\n",
                    receipt.operation,
                    job.job(),
                    job.units(),
                    accepted.event
                ),
            )
        }
        Err(error) => {
            eprintln!("documents: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run_events(outbox: &dyn OutboxStore) -> ExitCode {
    let events = match wait(outbox.events()) {
        Ok(events) => events,
        Err(error) => {
            eprintln!("documents: {error}");
            return ExitCode::FAILURE;
        }
    };
    let now = outbox.now_ms();
    let mut text = String::new();
    for row in &events {
        let event = &row.event;
        let conversion = row
            .conversion
            .map(|number| format!(", conversion {number}"))
            .unwrap_or_default();
        text.push_str(&format!(
            "job {} ({}, {} units): event {} {}{conversion}, deliveries {}, accepted {} ago\n",
            event.operation,
            event.job,
            event.units,
            event.id,
            row.state,
            row.deliveries,
            age(now - row.accepted_at_ms)
        ));
    }
    text.push_str(&match events.len() {
        1 => "1 event\n".to_owned(),
        n => format!("{n} events\n"),
    });
    output::printed("documents", &text)
}

/// Prints `text`; a failed write is the program's failure.
fn refuse(line: &str) -> ExitCode {
    eprintln!("documents: {line}");
    ExitCode::from(2)
}
