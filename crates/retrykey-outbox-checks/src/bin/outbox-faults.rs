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
    let programs = programs_beside_me()?;
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
            let (what, when) = (fault.what(), fault.when());
            match placement(backend, fault, url.as_deref()) {
                Placement::NotApplicable => {}
                Placement::NoServer => {
                    let var = pg::URL_VAR;
                    println!("{what:<10}  {when:<46}  {backend:<8}  skipped: set {var} to enable");
                    skipped += 1;
                }
                Placement::Unavailable(why) => {
                    println!("{what:<10}  {when:<46}  {backend:<8}  BROKEN: {why}");
                    broken += 1;
                }
                Placement::Ready(place) => {
                    let row = run(fault, &programs, place);
                    broken += usize::from(!row.problems.is_empty());
                    print_row(&row);
                }
            }
        }
    }
    Ok(verdict(broken, skipped))
}

/// The `dispatcher` and `converter` binaries beside this program, or why they cannot run.
fn programs_beside_me() -> anyhow::Result<Programs> {
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
    Ok(programs)
}

/// Where one row of the table runs, if it can.
enum Placement {
    /// The fault does not apply to the backend (SQLite has no server to restart).
    NotApplicable,
    /// A PostgreSQL row without a server to run on.
    NoServer,
    /// A PostgreSQL server of the row's own could not be started.
    Unavailable(String),
    /// Fresh databases for the row.
    Ready(Place),
}

/// The databases `fault`'s row on `backend` runs on; `url` is the PostgreSQL server, if any.
fn placement(backend: &str, fault: Fault, url: Option<&str>) -> Placement {
    match (backend, url) {
        ("sqlite", _) if fault.restarts_the_database() => Placement::NotApplicable,
        ("sqlite", _) => Placement::Ready(Place::sqlite()),
        (_, None) => Placement::NoServer,
        _ if fault.restarts_the_database() => match Place::private_postgres() {
            Ok(place) => Placement::Ready(place),
            Err(why) => Placement::Unavailable(why),
        },
        (_, Some(url)) => Placement::Ready(Place::postgres(url)),
    }
}

/// The table's last lines and the program's status.
fn verdict(broken: usize, skipped: usize) -> ExitCode {
    if broken > 0 {
        println!("FAILED: {broken} rows break the rule");
        return ExitCode::FAILURE;
    }
    // A skipped row is not a passed one: say how many were not checked.
    if skipped > 0 {
        println!("{skipped} row(s) skipped, not checked");
    }
    println!(
        "every row that ran: each accepted job converted exactly once, no event lost, none invented"
    );
    ExitCode::SUCCESS
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
