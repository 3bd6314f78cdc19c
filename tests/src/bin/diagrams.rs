//! Renders every diagram source `docs/src/diagrams/<name>.diag` to `<name>.svg` next to it.
//!
//! `just diagrams` runs this after a source changes; the `diagrams` test fails until it has.

use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use retrykey_tests::diagrams;

const HELP: &str = "\
usage: diagrams

Renders every diagram source docs/src/diagrams/NAME.diag to NAME.svg beside
it, and names each picture it wrote or left unchanged. It takes no other
argument.

  -h, --help  print this help
";

fn main() -> ExitCode {
    if let Some(arg) = std::env::args().nth(1) {
        if arg == "-h" || arg == "--help" {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        eprintln!("diagrams: unknown argument {arg:?} (see --help)");
        return ExitCode::from(2);
    }
    match render() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("diagrams: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn render() -> Result<()> {
    let dir = diagrams::diagrams_dir();
    let sources = diagrams::sources(&dir)?;
    if sources.is_empty() {
        bail!("no diagram sources (*.diag) in {}", dir.display());
    }
    for source in &sources {
        let text = retrykey_tests::read(source)?;
        let diagram = diagrams::parse(&text).with_context(|| source.display().to_string())?;
        let svg = diagram.render();
        let target = source.with_extension("svg");
        let name = target
            .strip_prefix(retrykey_tests::workspace_root())
            .unwrap_or(&target);
        if std::fs::read_to_string(&target).ok().as_deref() == Some(svg.as_str()) {
            println!("unchanged {}", name.display());
        } else {
            std::fs::write(&target, svg)
                .with_context(|| format!("writing {}", target.display()))?;
            println!("wrote     {}", name.display());
        }
    }
    Ok(())
}
