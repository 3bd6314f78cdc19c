//! The lost reply over a real connection: the service commits, the connection closes before the
//! reply, the client reports "unknown", and a retry under the same key gets the original receipt.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Parser;
use retrykey::{Ledger, Receipt, Request, Store};
use retrykey_client::tcp::{Faults, LedgerServer, TcpAdapter};
use retrykey_client::{Attempt, Client, Failure, Outcome, Policy, Success};

/// Replays the Stage 1 story over loopback TCP, with a fault switch on the service.
#[derive(Parser)]
#[command(name = "lost-reply-tcp")]
struct Args {
    /// Retry under a new key instead of the operation's key (the mistake this lab is about).
    #[arg(long)]
    fresh_key: bool,
    /// Seed for the operation keys and the jitter, so that every run prints the same text.
    #[arg(long, default_value_t = 7)]
    seed: u64,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let args = Args::parse();
    let store = Arc::new(Store::new());
    let faults = Faults::default();
    let loopback = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
    let server = LedgerServer::start(loopback, store.clone(), faults.clone())
        .await
        .context("starting the ledger service")?;
    let ledger = TcpAdapter::new(server.local_addr());
    let request = Request::new("convert-document", 7)?;

    println!("A ledger service listens on loopback TCP. Its fault switch is armed: the next");
    println!("request commits, then the connection closes before the reply is written.");
    faults.drop_next_replies(1);

    println!();
    println!("1. The client sends the operation; its policy allows one attempt.");
    let once = Client::builder(Policy::default().single_attempt())
        .seed(args.seed)
        .build();
    let key = once.new_key();
    println!("   operation key {key}");
    let outcome = once
        .run_with_key(key.clone(), |a| traced(&ledger, a, &request))
        .await;
    report(&outcome);
    server_view(&store, "the attempt did commit")?;

    println!();
    let retry_key = if args.fresh_key {
        let fresh = once.new_key();
        println!("2. The client retries under a NEW key {fresh}.");
        fresh
    } else {
        println!("2. The client retries the operation under the key it kept.");
        key
    };
    let outcome = once
        .run_with_key(retry_key, |a| traced(&ledger, a, &request))
        .await;
    report(&outcome);
    let effects = if store.records()? == 1 {
        "one effect"
    } else {
        "the effect happened twice"
    };
    server_view(&store, effects)?;

    println!();
    println!("3. The executor does the same by itself: a new operation of 3 units, a policy of");
    println!("   3 attempts, and the fault switch armed again.");
    faults.drop_next_replies(1);
    // Another seed: two clients seeded alike would draw the same keys (seed only for demos).
    let client = Client::builder(Policy::default())
        .seed(args.seed.wrapping_add(1))
        .build();
    let small = Request::new("convert-document", 3)?;
    let outcome = client.run(|a| traced(&ledger, a, &small)).await;
    report(&outcome);
    server_view(&store, "each operation took effect once")?;

    server.shutdown().await;
    Ok(())
}

/// One attempt over TCP, printed as it completes.
async fn traced(
    ledger: &TcpAdapter,
    attempt: Attempt,
    request: &Request,
) -> Result<Success<Receipt>, Failure> {
    let number = attempt.number;
    let result = ledger.apply(attempt, request).await;
    match &result {
        Ok(reply) => {
            let receipt = reply.value;
            let how = if reply.replayed {
                "replayed from the record"
            } else {
                "new"
            };
            println!(
                "   attempt {number} -> OK: operation {}, total {}, {how}",
                receipt.operation, receipt.total
            );
        }
        Err(failure) => println!("   attempt {number} -> {failure}"),
    }
    result
}

fn report(outcome: &Outcome<Receipt>) {
    match outcome {
        Outcome::Succeeded {
            replayed, attempts, ..
        } => {
            let plural = if *attempts == 1 {
                "attempt"
            } else {
                "attempts"
            };
            let what = if *replayed {
                "replayed: the original receipt"
            } else {
                "a new effect"
            };
            println!("   outcome: succeeded after {attempts} {plural}, {what}");
        }
        Outcome::Rejected { failure, .. } => println!("   outcome: rejected ({failure})"),
        Outcome::Unknown {
            stop,
            may_have_applied,
            ..
        } => {
            let why = if *may_have_applied {
                "the request was sent; it may have taken effect"
            } else {
                "no request reached the service"
            };
            println!("   outcome: unknown ({stop}; {why})");
        }
    }
}

fn server_view(store: &Store, meaning: &str) -> Result<()> {
    let records = store.records()?;
    let plural = if records == 1 { "record" } else { "records" };
    println!(
        "   server: total {}, {records} {plural}: {meaning}",
        store.total()?
    );
    Ok(())
}
