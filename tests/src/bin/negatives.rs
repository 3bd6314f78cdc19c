//! `just test-negatives`: run each negative variant's real test suite and hold it to its word.
//!
//! A variant holds when its test program runs each suite it declares (`suites`) whole, as the
//! package it mirrors runs it, with no check missing, ignored or added and no other suite;
//! `cargo test` fails exactly the checks it declares as `must_fail` (checks in `may_fail` must
//! run and may fail), under loom exactly its `loom_must_fail` among all the mirrored loom
//! models; it compiles without a warning; and its `src/lib.rs` differs from the file it mirrors
//! only inside its `// NEGATIVE:` blocks. Anything else is a broken lab.
//!
//! A variant whose bug a network can show also declares `simulate`: the simulator (stage 8)
//! must catch it within the declared seeds of its scenario, by the declared rule, and the
//! failing seed must replay exactly (the same history twice). An HTTP variant declares
//! `conform`: served behind the payments handler, it fails exactly those checks of the
//! conformance kit, each with a witness of at most ten exchanges.
//!
//! Without `RETRYKEY_PG_URL`, a variant that declares `needs_postgres` runs with its PostgreSQL
//! checks ignored ("needs PostgreSQL"): they must all be there, and its row says `skipped`, its
//! own verdict, never a pass. Under CI (`CI` set) or with `--require-all`, a skip is a failure.
//!
//! Its flags are in `HELP` (`cargo run -p retrykey-tests --bin negatives -- --help`).

use std::collections::{BTreeSet, HashMap};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use retrykey_tests::cargo_test::{cargo_test, listed, loom_test};
use retrykey_tests::declared::NEEDS_POSTGRES;
use retrykey_tests::declared::Simulated;
use retrykey_tests::diff::{diff, render, sources};
use retrykey_tests::tidy::located::change_problems;
use retrykey_tests::verdict::{judge_loom_run, judge_run, rate_run_problem};
use retrykey_tests::{
    Declared, conformed, mirrored_package, postgres_configured, simulated, skips_are_failures,
    variants,
};

const HELP: &str = "\
usage: negatives [VARIANT...] [--loom-only] [--require-all] [--rate-runs N]
       negatives --diff VARIANT

Runs each negative variant's real test suite (every variant under labs/, or
the ones named) and holds it to its declaration: it fails exactly the checks
it declares, runs its suites whole, and differs from the file it mirrors
only inside its NEGATIVE blocks. Exits 0 only when every variant holds.

  --loom-only      only the variants with loom models, and only those models
  --require-all    a variant skipped for want of PostgreSQL fails the run
                   (the default when CI is set)
  --rate-runs N    runs of each check that may fail, to measure how often
                   it does (default 10)
  --diff VARIANT   print the variant's change to the file it mirrors, and
                   run nothing
  -h, --help       print this help
";

struct Options {
    only: Vec<String>,
    loom_only: bool,
    require_all: bool,
    rate_runs: usize,
    diff: Option<String>,
}

/// The options, or `None` when the arguments ask for the help.
fn options() -> Result<Option<Options>> {
    let mut options = Options {
        only: Vec::new(),
        loom_only: false,
        require_all: skips_are_failures(),
        rate_runs: 10,
        diff: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--loom-only" => options.loom_only = true,
            "--require-all" => options.require_all = true,
            "--rate-runs" => {
                let runs = args.next().context("--rate-runs needs a number")?;
                options.rate_runs = runs.parse().context("--rate-runs needs a whole number")?;
            }
            "--diff" => options.diff = Some(args.next().context("--diff needs a variant")?),
            "-h" | "--help" => return Ok(None),
            flag if flag.starts_with('-') => bail!("unknown option {flag} (see --help)"),
            variant => options.only.push(variant.to_string()),
        }
    }
    Ok(Some(options))
}

/// The verdict on one variant.
enum Verdict {
    /// It fails exactly as declared.
    Holds,
    /// It is a broken lab: each line says why.
    Broken(Vec<String>),
    /// Its checks could not run here; the reason.
    Skipped(&'static str),
}

struct Row {
    name: String,
    stage: u32,
    must: usize,
    /// How many declared checks failed; `None` when the checks did not run.
    did: Option<usize>,
    verdict: Verdict,
    chance: String,
    /// How many checks the harness ignored for want of PostgreSQL.
    skipped: usize,
    /// What the simulator found, for a variant that declares `simulate`.
    simulated: String,
    /// What the conformance kit found, for a variant that declares `conform`.
    conformed: String,
}

fn main() -> ExitCode {
    // The kit asks the payments handler to panic; the layer answers it, not this output.
    retrykey_http::payments::quiet_asked_panics();
    // One line and exit 1 on failure, whatever RUST_BACKTRACE says: no backtrace, no panic.
    match run() {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<ExitCode> {
    let Some(options) = options()? else {
        print!("{HELP}");
        return Ok(ExitCode::SUCCESS);
    };
    let mut all = variants()?;
    if let Some(variant) = &options.diff {
        let (_, declared) = all
            .iter()
            .find(|(name, _)| name == variant)
            .with_context(|| format!("no variant named {variant} under labs/"))?;
        let (correct, broken) = sources(variant, declared)?;
        println!("--- {}", declared.mirrors.display());
        println!("+++ labs/{variant}/src/lib.rs");
        print!("{}", render(&diff(&correct, &broken), 3));
        return Ok(ExitCode::SUCCESS);
    }
    if !options.only.is_empty() {
        for name in &options.only {
            if !all.iter().any(|(variant, _)| variant == name) {
                bail!("no variant named {name} under labs/");
            }
        }
        all.retain(|(name, _)| options.only.contains(name));
    }
    if options.loom_only {
        all.retain(|(_, declared)| !declared.loom_must_fail.is_empty());
    }

    let mut suites = MirroredSuites::default();
    let mut rows = Vec::new();
    for (name, declared) in &all {
        eprintln!("checking {name} ...");
        rows.push(check(name, declared, &options, &mut suites)?);
    }
    Ok(report(&rows, options.require_all))
}

/// Checks one variant: its declaration, its change, then its suites (whose PostgreSQL checks
/// are ignored, and the variant skipped, when it needs PostgreSQL and none is configured).
fn check(
    name: &str,
    declared: &Declared,
    options: &Options,
    suites: &mut MirroredSuites,
) -> Result<Row> {
    let mut problems = declared.problems();
    problems.extend(change_problems(name, declared)?);
    let mut row = Row {
        name: name.to_string(),
        stage: declared.stage,
        must: declared.must_fail.len() + declared.loom_must_fail.len(),
        did: None,
        verdict: Verdict::Holds,
        chance: String::new(),
        skipped: 0,
        simulated: String::new(),
        conformed: String::new(),
    };

    let package = mirrored_package(declared)?;
    let postgres_skip = declared.needs_postgres && !postgres_configured();
    let mut did_fail = BTreeSet::new();
    let mut skipped = BTreeSet::new();
    let mut ran = BTreeSet::new();
    if !options.loom_only {
        let run = cargo_test(name, &[], &[]).context("running cargo test")?;
        let mirrored = suites.names(&package, false)?;
        let findings = judge_run(&run, declared, mirrored, &package, postgres_skip);
        problems.extend(findings.problems);
        skipped = findings.skipped;
        did_fail.extend(run.failed.difference(&declared.may_fail).cloned());
        ran = run.ran;
    }
    if !declared.loom_must_fail.is_empty() {
        let run = loom_test(name).context("running cargo test under loom")?;
        let mirrored = suites.names(&package, true)?;
        problems.extend(judge_loom_run(&run, declared, mirrored, &package).problems);
        did_fail.extend(run.failed.iter().cloned());
    }
    if !skipped.is_empty() {
        if options.require_all {
            problems.push(format!(
                "{NEEDS_POSTGRES}; RETRYKEY_PG_URL is not set, and every variant must run here"
            ));
        }
        row.skipped = skipped.len();
        row.verdict = if problems.is_empty() {
            Verdict::Skipped(NEEDS_POSTGRES)
        } else {
            Verdict::Broken(problems)
        };
        return Ok(row);
    }
    if !options.loom_only {
        let (chance, absent) = detection_rates(name, declared, options.rate_runs, &ran)?;
        row.chance = chance;
        problems.extend(absent);
        if let Some(simulated) = &declared.simulate {
            match simulate(name, simulated) {
                Ok(found) => row.simulated = found,
                Err(problem) => problems.push(problem),
            }
        }
        if let Some(checks) = &declared.conform {
            match conformed::caught_as_declared(name, checks) {
                Ok(found) => row.conformed = found,
                Err(problem) => problems.push(problem),
            }
        }
    }
    row.did = Some(did_fail.len());
    if !problems.is_empty() {
        row.verdict = Verdict::Broken(problems);
    }
    Ok(row)
}

/// Prints the table and one summary line; the exit code says whether every variant held.
fn report(rows: &[Row], require_all: bool) -> ExitCode {
    println!(
        "{:<28} {:>5} {:>9} {:>8}  verdict",
        "variant", "stage", "must fail", "did fail"
    );
    let (mut broken, mut skipped) = (0, 0);
    for row in rows {
        let did = row.did.map_or("-".to_string(), |did| did.to_string());
        let verdict = match &row.verdict {
            Verdict::Holds => "ok".to_string(),
            Verdict::Broken(_) => "BROKEN".to_string(),
            Verdict::Skipped(reason) => format!("skipped ({reason})"),
        };
        println!(
            "{:<28} {:>5} {:>9} {did:>8}  {verdict}",
            row.name, row.stage, row.must
        );
        if let Verdict::Broken(problems) = &row.verdict {
            for problem in problems {
                println!("    {problem}");
            }
        }
        if row.skipped > 0 {
            println!(
                "    not run: {} checks ignored, as they need PostgreSQL",
                row.skipped
            );
        }
        if !row.chance.is_empty() {
            println!("    {}", row.chance);
        }
        if !row.simulated.is_empty() {
            println!("    {}", row.simulated);
        }
        if !row.conformed.is_empty() {
            println!("    {}", row.conformed);
        }
        broken += usize::from(matches!(row.verdict, Verdict::Broken(_)));
        skipped += usize::from(matches!(row.verdict, Verdict::Skipped(_)));
    }
    let total = rows.len();
    if broken > 0 {
        let rule = if require_all {
            " (every variant must run here)"
        } else {
            ""
        };
        println!("FAILED: {broken} of {total} variants are broken labs{rule}");
        return ExitCode::FAILURE;
    }
    if skipped > 0 {
        println!(
            "{} of {total} variants fail exactly as declared; {skipped} skipped, not checked",
            total - skipped
        );
    } else {
        println!("all {total} variants fail exactly as declared");
    }
    ExitCode::SUCCESS
}

/// The check names of each mirrored package, listed once per run.
#[derive(Default)]
struct MirroredSuites {
    listed: HashMap<(String, bool), BTreeSet<String>>,
}

impl MirroredSuites {
    fn names(&mut self, package: &str, loom: bool) -> Result<&BTreeSet<String>> {
        let key = (package.to_string(), loom);
        if !self.listed.contains_key(&key) {
            let run = listed(package, loom).context("listing the mirrored package's checks")?;
            if !run.diagnostics.is_empty() {
                bail!(
                    "the correct package {package} does not build cleanly: {}",
                    run.diagnostics.join("; ")
                );
            }
            self.listed.insert(key.clone(), run.listed);
        }
        Ok(&self.listed[&key])
    }
}

/// The simulator's check, as `simulated::caught_as_declared` runs it, in the row's words.
fn simulate(name: &str, declared: &Simulated) -> Result<String, String> {
    let first = simulated::caught_as_declared(name, declared)?;
    Ok(format!(
        "simulated: seed {} of {} breaks {} (within {}), and replays exactly",
        first.seed, first.scenario, declared.rule, declared.within
    ))
}

/// How often the chance-only checks catch the bug, over `runs` single-round runs; and, for a
/// check that is not there to run (`ran`: the checks the full run ran), why the variant is broken.
fn detection_rates(
    name: &str,
    declared: &Declared,
    runs: usize,
    ran: &BTreeSet<String>,
) -> Result<(String, Vec<String>)> {
    let mut rates = Vec::new();
    let mut problems = Vec::new();
    for test in &declared.may_fail {
        if !ran.contains(test) {
            // The full run already names it as missing or ignored: no rate to measure.
            rates.push(format!("{test}: not run"));
            continue;
        }
        let (mut caught, mut absent) = (0, false);
        for _ in 0..runs {
            // `--tests`: the rate comes from the test programs; doc tests would only be
            // compiled again, every run, to be filtered out.
            let run = cargo_test(
                name,
                &["--tests", "--", "--exact", test],
                &[("STRESS_ROUNDS", "1")],
            )
            .context("running cargo test")?;
            if let Some(problem) = rate_run_problem(&run, test) {
                problems.push(problem);
                absent = true;
                break;
            }
            caught += usize::from(run.failed.contains(test));
        }
        rates.push(if absent {
            format!("{test}: not run")
        } else {
            format!("{test}: caught {caught}/{runs} runs")
        });
    }
    let chance = if rates.is_empty() {
        String::new()
    } else {
        format!("by chance only: {}", rates.join("; "))
    };
    Ok((chance, problems))
}
