//! Nested retries multiply: three layers of three attempts make 27 calls to a failing
//! dependency, unless the layers share one budget or leave retries to one owner.

use anyhow::Result;
use clap::Parser;
use retrykey_client::Outcome;
use retrykey_client::amplification::{Layering, demo_policy, run_chain};

/// Counts the calls a failing dependency receives through nested retrying layers.
#[derive(Parser)]
#[command(name = "amplification")]
struct Args {
    /// Layers in the chain (1 to 6).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=6))]
    layers: u32,
    /// Attempts each layer's policy allows (1 to 6).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=6))]
    attempts: u32,
    /// Seed for the jitter.
    #[arg(long, default_value_t = 7)]
    seed: u64,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let args = Args::parse();
    let policy = demo_policy(args.attempts)?;

    println!(
        "{} layers in front of a dependency that is down; each layer's policy allows {} attempts.",
        args.layers, args.attempts
    );
    println!();
    println!("{:<40} {:>10}  outcome", "how the layers retry", "calls");
    for layering in Layering::ALL {
        let run = run_chain(args.layers, policy, layering, args.seed).await;
        let outcome = match &run.outcome {
            Outcome::Unknown { stop, .. } => format!("unknown ({stop})"),
            other => other.kind().to_string(),
        };
        println!(
            "{:<40} {:>10}  {outcome}",
            layering.describe(),
            run.downstream_calls
        );
    }
    println!();
    println!(
        "The policy allows {} calls; {}^{} = {} when every layer owns its retries.",
        args.attempts,
        args.attempts,
        args.layers,
        args.attempts.pow(args.layers)
    );
    Ok(())
}
