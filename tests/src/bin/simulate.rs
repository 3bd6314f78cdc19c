//! `just simulate`: run seeds of a scenario in the simulated network and judge each history.
//!
//! Its flags are in `HELP` (`just simulate --help`). Exits 1 when a seed fails, 2 on a usage
//! error.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use retrykey_sim::{FinishedRun, Summary, trace};
use retrykey_tests::diagrams;
use retrykey_tests::scenario::SimulatorScenario;
use retrykey_tests::simulated;

const HELP: &str = "\
usage: simulate [--seeds N] [--from S] [--jobs N] [--scenario NAME]
                [--variant NAME]
       simulate --seed S [--trace] [--svg FILE] [--diag FILE]
                [--scenario NAME] [--variant NAME]

Runs seeds of a scenario in the simulated network and judges each history:
prints seeds per second, each failing seed with the rule it broke, and how
the operations ended. With --seed, replays that one seed. Exits 1 when a
seed breaks a rule, 2 on a usage error.

  --seeds N        how many seeds to run (default 1000)
  --from S         the first seed (default 0): runs seeds S..S+N
  --scenario NAME  the scenario to run (default lost-reply), one of:
                   SCENARIOS
  --variant NAME   run a variant's file in place of the correct code, one of:
                   VARIANTS
  --jobs N         seeds run at once (default: one per core)
  --seed S         replay one seed and say whether it kept every rule
  --trace          with --seed: print the run's timeline
  --svg FILE       with --seed: draw the run as a sequence diagram
  --diag FILE      with --seed: write that diagram's source (.diag)
  -h, --help       print this help
";

struct Options {
    seeds: u64,
    from: u64,
    seed: Option<u64>,
    scenario: SimulatorScenario,
    variant: Option<String>,
    jobs: usize,
    trace: bool,
    svg: Option<String>,
    diag: Option<String>,
}

/// The options, or `None` when the arguments ask for the help.
fn options() -> Result<Option<Options>> {
    let mut options = Options {
        seeds: 1000,
        from: 0,
        seed: None,
        scenario: SimulatorScenario::ALL[0],
        variant: None,
        jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
        trace: false,
        svg: None,
        diag: None,
    };
    let mut args = std::env::args().skip(1);
    let number = |flag: &str, value: Option<String>| -> Result<u64> {
        let value = value.with_context(|| format!("{flag} needs a number"))?;
        value
            .parse()
            .with_context(|| format!("{flag} needs a whole number, not {value:?}"))
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seeds" => options.seeds = number("--seeds", args.next())?,
            "--from" => options.from = number("--from", args.next())?,
            "--seed" => options.seed = Some(number("--seed", args.next())?),
            "--jobs" => options.jobs = number("--jobs", args.next())?.max(1) as usize,
            "--scenario" => {
                let name = args.next().context("--scenario needs a name")?;
                options.scenario = name.parse()?;
            }
            "--variant" => options.variant = Some(args.next().context("--variant needs a name")?),
            "--trace" => options.trace = true,
            "--svg" => options.svg = Some(args.next().context("--svg needs a file")?),
            "--diag" => options.diag = Some(args.next().context("--diag needs a file")?),
            "-h" | "--help" => return Ok(None),
            other => bail!("unknown argument {other:?} (see --help)"),
        }
    }
    simulated::known(options.variant.as_deref(), options.scenario)?;
    if (options.trace || options.svg.is_some() || options.diag.is_some()) && options.seed.is_none()
    {
        bail!("--trace, --svg and --diag replay one seed: give it with --seed S");
    }
    Ok(Some(options))
}

fn main() -> ExitCode {
    match options() {
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(2)
        }
        Ok(None) => {
            let names: Vec<String> = SimulatorScenario::ALL
                .iter()
                .map(ToString::to_string)
                .collect();
            print!(
                "{}",
                HELP.replace("SCENARIOS", &names.join(", "))
                    .replace("VARIANTS", &simulated::VARIANTS.join(", "))
            );
            ExitCode::SUCCESS
        }
        Ok(Some(options)) => match run(&options) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::FAILURE,
            Err(error) => {
                eprintln!("error: {error:#}");
                ExitCode::FAILURE
            }
        },
    }
}

fn stack_name(options: &Options) -> String {
    match &options.variant {
        Some(variant) => format!("the variant {variant}"),
        None => "the correct stack".to_owned(),
    }
}

/// Runs what the options ask; `Ok(true)` when every seed kept every rule.
fn run(options: &Options) -> Result<bool> {
    let variant = options.variant.as_deref();
    if let Some(seed) = options.seed {
        let run = simulated::run(variant, options.scenario, seed)?;
        if options.trace {
            print!("{}", trace::timeline(&run));
        } else {
            match &run.finding {
                None => println!("seed {seed} of {}: every rule held", options.scenario),
                Some(finding) => println!("seed {seed} of {}: {finding}", options.scenario),
            }
        }
        let source = trace::diagram(&run);
        if let Some(path) = &options.diag {
            std::fs::write(path, &source).with_context(|| format!("cannot write {path}"))?;
            println!("wrote {path}");
        }
        if let Some(path) = &options.svg {
            let diagram = diagrams::parse(&source)
                .map_err(|error| anyhow::anyhow!("the trace's diagram: {error}"))?;
            std::fs::write(path, diagram.render())
                .with_context(|| format!("cannot write {path}"))?;
            println!("wrote {path}");
        }
        return Ok(run.finding.is_none());
    }

    let seeds = options.from..options.from.saturating_add(options.seeds);
    println!(
        "simulating {} on {}: seeds {}..{}, {} at once",
        options.scenario,
        stack_name(options),
        seeds.start,
        seeds.end,
        options.jobs
    );
    let started = Instant::now();
    let next = AtomicU64::new(seeds.start);
    let done = AtomicU64::new(0);
    let failures: Mutex<Vec<FinishedRun>> = Mutex::new(Vec::new());
    let summary = Mutex::new(Summary::default());
    let progress = std::io::stderr().is_terminal();
    std::thread::scope(|scope| {
        for _ in 0..options.jobs {
            scope.spawn(|| {
                loop {
                    let seed = next.fetch_add(1, Ordering::Relaxed);
                    if seed >= seeds.end {
                        break;
                    }
                    let run = simulated::run(variant, options.scenario, seed)
                        .expect("the variant was checked to run in the scenario");
                    summary.lock().unwrap().add(&run);
                    if run.finding.is_some() {
                        failures.lock().unwrap().push(run);
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        if progress {
            scope.spawn(|| {
                let total = seeds.end - seeds.start;
                loop {
                    let finished = done.load(Ordering::Relaxed);
                    let rate = finished as f64 / started.elapsed().as_secs_f64().max(1e-9);
                    let failed = failures.lock().unwrap().len();
                    eprint!("\r  {finished}/{total} seeds · {rate:.0} seeds/s · {failed} failed ");
                    let _ = std::io::stderr().flush();
                    if finished >= total {
                        eprintln!();
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(250));
                }
            });
        }
    });
    let took = started.elapsed();
    let summary = summary.into_inner().unwrap();
    let mut failures = failures.into_inner().unwrap();
    failures.sort_by_key(|run| run.seed);
    println!(
        "{} seeds in {:.1} s: {:.0} seeds/s",
        summary.runs,
        took.as_secs_f64(),
        summary.runs as f64 / took.as_secs_f64().max(1e-9)
    );
    print_summary(&summary);
    if failures.is_empty() {
        println!("every seed kept every rule");
        return Ok(true);
    }
    println!(
        "{} of {} seeds FAILED; the first {}:",
        failures.len(),
        summary.runs,
        failures.len().min(5)
    );
    for run in failures.iter().take(5) {
        let finding = run.finding.as_ref().expect("a failing run");
        println!("  seed {}: {finding}", run.seed);
    }
    let first = &failures[0];
    let variant = match &options.variant {
        Some(name) => format!(" --variant {name}"),
        None => String::new(),
    };
    println!(
        "replay: just simulate --scenario {}{variant} --seed {} --trace",
        options.scenario, first.seed
    );
    Ok(false)
}

fn print_summary(summary: &Summary) {
    println!(
        "operations: {} ({} succeeded, {} rejected, {} unknown)",
        summary.operations(),
        summary.succeeded,
        summary.rejected,
        summary.unknown
    );
    println!("retries per operation:");
    let most = summary.retries.values().copied().max().unwrap_or(1).max(1);
    for (retries, count) in &summary.retries {
        let width = (count * 40).div_ceil(most) as usize;
        println!("  {retries:>2}  {:<40}  {count}", "#".repeat(width));
    }
    println!(
        "replays: {} · answers cut: {} · effects: {}",
        summary.replays, summary.cut, summary.effects
    );
}
