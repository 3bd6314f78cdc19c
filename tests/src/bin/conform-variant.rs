//! `just conform-variant NAME [--chaos N]`: the conformance kit against an HTTP variant, served
//! behind the payments handler on 127.0.0.1 (a server per check), as `just test-negatives` runs
//! it; `correct` for the correct layer in the same harness. Prints the kit's table and
//! witnesses, or with `--chaos N` a chaos run of N operations (seed 7) on one server; exits 1
//! when something fails, 2 for a name or flag it does not know.

use std::process::ExitCode;

use retrykey_tests::conformed::{VARIANTS, kit_on, profile, serve};

/// The seed of `--chaos`: the book shows its run.
const SEED: u64 = 7;

fn main() -> ExitCode {
    // The kit asks the handler to panic; the layer answers it, and the output stays the kit's.
    retrykey_http::payments::quiet_asked_panics();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (name, chaos) = match args.as_slice() {
        [flag] if flag == "-h" || flag == "--help" => {
            println!(
                "usage: conform-variant NAME [--chaos N]\n\nRuns the conformance kit against an HTTP variant served behind the payments\nhandler, or against the correct layer (NAME = correct); with --chaos N, a chaos\nrun of N operations (seed {SEED}) instead. Variants: {}",
                VARIANTS.join(", ")
            );
            return ExitCode::SUCCESS;
        }
        [name] => (name.clone(), None),
        [name, flag, count] if flag == "--chaos" => match count.parse::<usize>() {
            Ok(count) if (1..=10_000).contains(&count) => (name.clone(), Some(count)),
            _ => {
                return refuse(&format!(
                    "--chaos {count:?}: expected 1 to 10000 operations"
                ));
            }
        },
        _ => {
            return refuse(&format!(
                "expected a name, and --chaos N: correct, or one of {}",
                VARIANTS.join(", ")
            ));
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
    let outcome = runtime.block_on(async {
        match chaos {
            None => kit_on(variant)
                .await
                .map(|report| (report.text(), report.failed().is_empty())),
            Some(operations) => {
                let server = serve(variant).await?;
                let base = server.url().parse().expect("a loopback URL");
                let report = retrykey_conform::chaos(&profile(), &base, operations, SEED).await;
                server.stop().await;
                let report = report.expect("a fault proxy on 127.0.0.1");
                Ok((report.text(), report.failure.is_none()))
            }
        }
    });
    match outcome {
        Ok((text, passed)) => {
            print!("{text}");
            if passed {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(unknown) => refuse(&unknown.to_string()),
    }
}

fn refuse(why: &str) -> ExitCode {
    eprintln!("conform-variant: {why}");
    ExitCode::from(2)
}
