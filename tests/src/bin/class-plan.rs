//! `just class-plan`: the minutes of each page of the class, computed from what the page holds
//! at the pace `docs/src/class.toml` states, then the core's minutes and the whole class's.

use std::process::ExitCode;

use anyhow::{Context, Result};
use retrykey_tests::plan::plan;
use retrykey_tests::workspace_root;

const HELP: &str = "\
usage: class-plan [--parts]

Prints the minutes of each page of the class (`ch01  NN min`), then the
core track's minutes and the total. Each page is priced from what it
holds (prose words, listing lines, commands and their output, Predict
questions, pieces and exercises) at the pace under [pace] in
docs/src/class.toml: change a figure there and run it again.

  --parts     also show each page's track and its minutes by kind of work
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
