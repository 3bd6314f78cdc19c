//! `just exercise` and `just check-exercise`: copy a negative variant into `exercises/` to fix
//! it yourself, then ask which of its declared checks still fail.
//!
//! Usage:
//! - `exercise new VARIANT [--as NAME] [--force]`: copy `labs/VARIANT` to `exercises/NAME`
//!   (NAME defaults to VARIANT); an existing copy is kept unless `--force` is given.
//! - `exercise check NAME`: run the copy's suite (and its loom models, where declared); exit 0
//!   only when every declared check passes.
//! - `exercise remove NAME`: delete the copy (a cargo command running meanwhile never sees it
//!   half gone).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use retrykey_tests::exercise::{EXERCISES_DIR, check, create, exercise_dir, package_name, remove};
use retrykey_tests::workspace_root;

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(error) => {
            // One line, whatever RUST_BACKTRACE says: a refusal is not a crash.
            eprintln!("exercise: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<ExitCode> {
    let mut args = std::env::args().skip(1);
    let command = args
        .next()
        .context("usage: exercise (new VARIANT | check NAME | remove NAME)")?;
    let mut positional = Vec::new();
    let (mut name, mut force) = (None, false);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--force" => force = true,
            "--as" => name = Some(args.next().context("--as needs a name")?),
            flag if flag.starts_with('-') => bail!("unknown option {flag}"),
            _ => positional.push(arg),
        }
    }
    let [target] = positional.as_slice() else {
        bail!("usage: exercise (new VARIANT [--as NAME] [--force] | check NAME | remove NAME)");
    };
    // Paths are shown relative to the workspace root, where the recipes run.
    let root = workspace_root();
    std::env::set_current_dir(&root).with_context(|| format!("cannot enter {}", root.display()))?;
    let here = Path::new(".");
    match command.as_str() {
        "new" => {
            let name = name.as_deref().unwrap_or(target);
            let dir = create(
                Path::new("labs"),
                Path::new(EXERCISES_DIR),
                target,
                name,
                force,
            )?;
            let shown = dir.display();
            println!("created {shown} (package {})", package_name(name));
            println!(
                "read {shown}/README.md, fix {shown}/src/lib.rs, then: just check-exercise {name}"
            );
            Ok(ExitCode::SUCCESS)
        }
        "check" => {
            if name.is_some() || force {
                bail!("check takes only the exercise's name");
            }
            let dir = exercise_dir(here, target);
            let dir = dir.strip_prefix(here).unwrap_or(&dir);
            if dir.is_dir() {
                eprintln!("running the checks of {} ...", dir.display());
            }
            let report = check(here, dir, &[])?;
            print!("{}", report.render());
            Ok(if report.fixed() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        "remove" => {
            if name.is_some() || force {
                bail!("remove takes only the exercise's name");
            }
            let dir = remove(Path::new(EXERCISES_DIR), target)?;
            println!("removed {}", dir.display());
            Ok(ExitCode::SUCCESS)
        }
        other => bail!("unknown command {other}: use new, check or remove"),
    }
}
