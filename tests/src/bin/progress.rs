//! `just progress`: every piece and exercise of the class, by chapter and track, as not
//! started, how many of its checks pass, or fixed; then the next step and its hint.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use retrykey_tests::progress::{fingerprint, survey, wait_for_change};
use retrykey_tests::{class, workspace_root};

const HELP: &str = "\
usage: progress [--watch]

Lists every piece and exercise of the class by chapter and track: not
started, N of M checks pass, or fixed; then the next step and its hint.
A copy counts by the origin its Cargo.toml records, whatever its folder's
name; the book's own book-* copies never count. Copies are only read:
builds and test runs go to the target folder.

  --watch     run again after each save under exercises/, until Ctrl-C
  -h, --help  print this help
";

/// How often the watch looks at the files' modification times.
const POLL: Duration = Duration::from_millis(500);

fn main() -> ExitCode {
    let mut watch = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--watch" => watch = true,
            "-h" | "--help" => {
                print!("{HELP}");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("progress: unknown argument {other:?} (see --help)");
                return ExitCode::from(2);
            }
        }
    }
    match run(watch) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("progress: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(watch: bool) -> Result<()> {
    let root = workspace_root();
    loop {
        let before = fingerprint(&root);
        let class = class::load(&root).context("cannot read the class")?;
        if watch {
            // Clear the screen and go home, as a watch does between runs.
            print!("\x1b[2J\x1b[H");
        }
        print!("{}", survey(&root, &class, &[])?.render());
        if !watch {
            return Ok(());
        }
        println!("\nwatching exercises/ for saves (Ctrl-C stops)");
        wait_for_change(&before, POLL, || fingerprint(&root));
    }
}
