//! `just exercise` and `just check-exercise`: copy a negative variant into `exercises/` to fix
//! it yourself, or a correct piece with its key bodies blanked to write yourself, then ask what
//! still fails.
//!
//! Its commands and flags are in `HELP` (`just exercise --help`).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use retrykey_tests::declared::parse_manifest;
use retrykey_tests::exercise::blank::{Bodies, create_blank, piece};
use retrykey_tests::exercise::spec::{build, progress};
use retrykey_tests::exercise::{EXERCISES_DIR, check, create, exercise_dir, package_name, remove};
use retrykey_tests::workspace_root;

const USAGE: &str = "usage: exercise (new VARIANT | new --blank PIECE) [--as NAME] [--force] \
                     | check NAME | remove NAME (see --help)";

const HELP: &str = "\
usage: exercise new VARIANT [--as NAME] [--force]
       exercise new --blank PIECE [--as NAME] [--force]
       exercise check NAME
       exercise remove NAME

new copies the variant labs/VARIANT to exercises/NAME to fix it, or with
--blank the piece PIECE of tests/blanks.toml, its key bodies replaced by
todo!(\"hint\"), to write it yourself. check runs a variant copy's declared
checks, or a blank piece's checks in teaching order up to the first that
fails, and exits 0 only when all pass. remove deletes the copy whole.

  --blank     new: copy a piece to write, not a variant to fix
  --as NAME   new: name the copy NAME (default: the variant or piece)
  --force     new: replace an existing copy of that name
  -h, --help  print this help
";

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
    if std::env::args()
        .skip(1)
        .any(|arg| arg == "-h" || arg == "--help")
    {
        print!("{HELP}");
        return Ok(ExitCode::SUCCESS);
    }
    let mut args = std::env::args().skip(1);
    let command = args.next().context(USAGE)?;
    let mut positional = Vec::new();
    let (mut name, mut force, mut blank) = (None, false, false);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--force" => force = true,
            "--blank" => blank = true,
            "--as" => name = Some(args.next().context("--as needs a name")?),
            flag if flag.starts_with('-') => bail!("unknown option {flag}"),
            _ => positional.push(arg),
        }
    }
    let [target] = positional.as_slice() else {
        bail!(USAGE);
    };
    // Paths are shown relative to the workspace root, where the recipes run.
    let root = workspace_root();
    std::env::set_current_dir(&root).with_context(|| format!("cannot enter {}", root.display()))?;
    let here = Path::new(".");
    if command != "new" && (name.is_some() || force || blank) {
        bail!("{command} takes only the exercise's name");
    }
    match command.as_str() {
        "new" => {
            let name = name.as_deref().unwrap_or(target);
            let exercises = Path::new(EXERCISES_DIR);
            let (dir, blanked) = if blank {
                let piece = piece(here, target)?;
                let file = match &piece.own {
                    Some(own) => format!("src/{}.rs", own.module),
                    None => "src/lib.rs".to_string(),
                };
                let dir = create_blank(here, exercises, &piece, name, Bodies::Blank, force)?;
                (dir, Some(file))
            } else {
                let dir = create(Path::new("labs"), exercises, target, name, force)?;
                (dir, None)
            };
            let shown = dir.display();
            println!("created {shown} (package {})", package_name(name));
            if let Some(file) = blanked {
                println!("write the todo!() bodies in {shown}/{file}");
                println!("(its README.md lists them), then: just check-exercise {name}");
            } else {
                println!(
                    "read {shown}/README.md, fix {shown}/src/lib.rs, then: just check-exercise \
                     {name}"
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        "check" => {
            let dir = exercise_dir(here, target);
            let dir = dir.strip_prefix(here).unwrap_or(&dir).to_path_buf();
            let manifest = dir.join("Cargo.toml");
            let blank = std::fs::read_to_string(&manifest)
                .ok()
                .and_then(|text| parse_manifest(&text).ok())
                .and_then(|manifest| manifest.blank);
            if let Some(piece_name) = blank {
                let piece = piece(here, &piece_name)?;
                eprintln!("building {} ...", dir.display());
                let package = package_name(target);
                let programs = build(here, std::slice::from_ref(&package), &[])?;
                let program = &programs[&package];
                println!(
                    "{}: {} checks, in teaching order",
                    dir.display(),
                    piece.spec.len(),
                );
                let report = progress(&piece, program, &dir, &dir)?;
                print!("{}", report.render());
                return Ok(if report.fixed() {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::FAILURE
                });
            }
            if dir.is_dir() {
                eprintln!("running the checks of {} ...", dir.display());
            }
            let report = check(here, &dir, &[])?;
            print!("{}", report.render());
            Ok(if report.fixed() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        "remove" => {
            let dir = remove(Path::new(EXERCISES_DIR), target)?;
            println!("removed {}", dir.display());
            Ok(ExitCode::SUCCESS)
        }
        other => bail!("unknown command {other}: use new, check or remove"),
    }
}
