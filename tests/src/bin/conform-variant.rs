//! `just conform-variant NAME`: the conformance kit against an HTTP variant, served behind the
//! payments handler on 127.0.0.1 (a server per check), as `just test-negatives` runs it;
//! `correct` for the correct layer in the same harness. Prints the kit's table and witnesses;
//! exits 1 when a check fails, 2 for a name it does not know.

use std::process::ExitCode;

use retrykey_tests::conformed::{VARIANTS, kit_on};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = match args.as_slice() {
        [flag] if flag == "-h" || flag == "--help" => {
            println!(
                "usage: conform-variant NAME\n\nRuns the conformance kit against an HTTP variant served behind the payments\nhandler, or against the correct layer (NAME = correct). Variants: {}",
                VARIANTS.join(", ")
            );
            return ExitCode::SUCCESS;
        }
        [name] => name.clone(),
        _ => {
            eprintln!(
                "conform-variant: expected one name: correct, or one of {}",
                VARIANTS.join(", ")
            );
            return ExitCode::from(2);
        }
    };
    let variant = (name != "correct").then_some(name.as_str());
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("conform-variant: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(kit_on(variant)) {
        Ok(report) => {
            print!("{}", report.text());
            if report.failed().is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(unknown) => {
            eprintln!("conform-variant: {unknown}");
            ExitCode::from(2)
        }
    }
}
