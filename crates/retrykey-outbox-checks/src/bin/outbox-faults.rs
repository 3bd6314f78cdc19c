//! Runs every fault scenario of the outbox with real processes and prints the table: what was
//! killed or stopped, and what both databases hold afterwards. Exits with 1 when any row breaks
//! the rule (each accepted job converted exactly once, no event lost, none invented).
//!
//! The `dispatcher` and `converter` binaries are expected beside this program (`just
//! outbox-faults` builds them first).

use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Parser;
use retrykey_durable::pg;
use retrykey_outbox_checks::faults::{Fault, Place, Programs, Row, run};

/// Kill, stop and restart the outbox's processes mid-run; count conversions and deliveries.
#[derive(Parser)]
struct Args {
    /// Which backends: sqlite, postgres or all (postgres needs RETRYKEY_PG_URL).
    #[arg(long, default_value = "all")]
    backend: String,
}

fn main() -> anyhow::Result<ExitCode> {
    let args = Args::parse();
    let me = std::env::current_exe().context("cannot find this program's path")?;
    let programs = Programs::in_dir(me.parent().context("this program has no folder")?);
    for program in [&programs.dispatcher, &programs.converter] {
        if !program.is_file() {
            bail!(
                "{} is missing: build it first (cargo build -p retrykey-outbox -p retrykey-converter \
                 --bins --features retrykey-outbox/failpoints,retrykey-converter/failpoints)",
                program.display()
            );
        }
    }
    let backends: &[&str] = match args.backend.as_str() {
        "sqlite" => &["sqlite"],
        "postgres" => &["postgres"],
        "all" => &["sqlite", "postgres"],
        other => bail!("--backend must be sqlite, postgres or all, not {other:?}"),
    };
    let url = pg::url_from_env();

    println!(
        "{:<10}  {:<46}  {:<8}  {:>4}  {:>6}  {:>11}  {:>12}  {:>9}  verdict",
        "what", "when", "backend", "jobs", "claims", "conversions", "redeliveries", "delivered"
    );
    let (mut broken, mut skipped) = (0, 0);
    for &backend in backends {
        for fault in Fault::ALL {
            let place = match (backend, &url) {
                ("sqlite", _) if fault.restarts_the_database() => continue,
                ("sqlite", _) => Place::sqlite(),
                (_, None) => {
                    println!(
                        "{:<10}  {:<46}  {backend:<8}  skipped: set {} to enable",
                        fault.what(),
                        fault.when(),
                        pg::URL_VAR
                    );
                    skipped += 1;
                    continue;
                }
                _ if fault.restarts_the_database() => match Place::private_postgres() {
                    Ok(place) => place,
                    Err(why) => {
                        println!(
                            "{:<10}  {:<46}  {backend:<8}  BROKEN: {why}",
                            fault.what(),
                            fault.when()
                        );
                        broken += 1;
                        continue;
                    }
                },
                (_, Some(url)) => Place::postgres(url),
            };
            let row = run(fault, &programs, place);
            broken += usize::from(!row.problems.is_empty());
            print_row(&row);
        }
    }
    if broken > 0 {
        println!("FAILED: {broken} rows break the rule");
        return Ok(ExitCode::FAILURE);
    }
    // A skipped row is not a passed one: say how many were not checked.
    if skipped > 0 {
        println!("{skipped} row(s) skipped, not checked");
    }
    println!(
        "every row that ran: each accepted job converted exactly once, no event lost, none invented"
    );
    Ok(ExitCode::SUCCESS)
}

fn print_row(row: &Row) {
    let verdict = if row.problems.is_empty() {
        "ok"
    } else {
        "BROKEN"
    };
    println!(
        "{:<10}  {:<46}  {:<8}  {:>4}  {:>6}  {:>11}  {:>12}  {:>9}  {verdict}",
        row.fault.what(),
        row.fault.when(),
        row.backend,
        row.jobs,
        row.claims,
        row.conversions,
        row.redeliveries,
        row.delivered
    );
    for problem in &row.problems {
        println!("    {problem}");
    }
}
