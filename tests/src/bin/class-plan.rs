//! `just class-plan`: the minutes of each page's session, computed from what a student reads and
//! writes on it at the pace `docs/src/class.toml` states, then the core's, the take-home work's
//! and the whole class's.

use std::process::ExitCode;

use anyhow::{Context, Result};
use retrykey_tests::plan::plan;
use retrykey_tests::workspace_root;

const HELP: &str = "\
usage: class-plan [--parts]

Prints the minutes of each page's session (`ch01  NN min`), then the
core track's minutes, the take-home work's and the total. Each page is
priced from what a student reads and writes on it (prose, listings,
commands and their output, the answers it asks for, each piece's brief,
reads and lines, each exercise's brief, buggy functions and fix) at the
pace under [pace] in docs/src/class.toml, each figure with its source:
replace a figure with a trial of your own and run it again.

  --parts     also show each page's track, its minutes by kind of work,
              what each piece and exercise reads and writes, and the
              pace with its sources
  -h, --help  print this help
";

fn main() -> ExitCode {
    let mut parts = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--parts" => parts = true,
            "-h" | "--help" => {
                print!("{HELP}");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("class-plan: unknown argument {other:?} (see --help)");
                return ExitCode::from(2);
            }
        }
    }
    match run(parts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("class-plan: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(parts: bool) -> Result<()> {
    let plan = plan(&workspace_root()).context("cannot compute the plan")?;
    print!("{}", plan.render(parts));
    Ok(())
}
