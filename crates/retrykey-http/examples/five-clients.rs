//! Five clients retry one payment at once, then the replay, a changed body, a new key, a failing
//! first attempt and two keyless posts — all against a real server on 127.0.0.1.

use std::time::Duration;

use clap::Parser;
use retrykey_http::payments::Payments;
use retrykey_http::{BoxError, IdempotencyLayer};
use retrykey_server::loopback::{LoopbackClient, LoopbackReply, Server};
use tower_layer::Layer;

const PAY_500: &str = r#"{"amount":500}"#;

/// Five concurrent retries of one payment, then the other cases, against a loopback server.
#[derive(Debug, Parser)]
struct Args {
    /// Serve the payments handler bare, without the Idempotency-Key layer (see what it prevents).
    #[arg(long)]
    without_layer: bool,
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = Args::parse();
    let payments = Payments::new(Duration::from_millis(50));
    let server = if args.without_layer {
        Server::start(payments.service()).await?
    } else {
        Server::start(IdempotencyLayer::new().layer(payments.service())).await?
    };
    let client = LoopbackClient::new(server.url());
    let key = |k| [("idempotency-key", k)];

    println!("== five concurrent attempts of one payment (key pay-123)");
    let attempts: Vec<_> = (0..5)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move {
                client
                    .post("/payments", &[("idempotency-key", "pay-123")], PAY_500)
                    .await
            })
        })
        .collect();
    let mut lines = Vec::new();
    for attempt in attempts {
        lines.push(show(&attempt.await??));
    }
    lines.sort(); // which of the five ran the handler is up to the scheduler
    for line in lines {
        println!("   {line}");
    }
    counts(&payments).await?;

    println!("\n== the same key later, same body");
    println!(
        "   {}",
        show(&client.post("/payments", &key("pay-123"), PAY_500).await?)
    );
    counts(&payments).await?;

    println!("\n== the same key, a different body");
    let reply = client
        .post("/payments", &key("pay-123"), r#"{"amount":999}"#)
        .await?;
    println!("   {}", show(&reply));
    counts(&payments).await?;

    println!("\n== a new key (pay-456)");
    println!(
        "   {}",
        show(&client.post("/payments", &key("pay-456"), PAY_500).await?)
    );
    counts(&payments).await?;

    println!("\n== a first attempt that fails with 500, then its retry (key pay-789)");
    let flaky = [("idempotency-key", "pay-789"), ("x-flaky", "pay-789")];
    for label in ["first", "retry"] {
        let reply = client
            .post("/payments", &flaky, r#"{"amount":100}"#)
            .await?;
        println!("   {label}: {}", show(&reply));
    }
    counts(&payments).await?;

    println!("\n== two posts without a key");
    for _ in 0..2 {
        println!(
            "   {}",
            show(&client.post("/payments", &[], r#"{"amount":1}"#).await?)
        );
    }
    counts(&payments).await?;

    server.stop().await;
    Ok(())
}

/// Status, body, and whether it was a replay.
fn show(reply: &LoopbackReply) -> String {
    let marker = if reply.replayed() { "  (replayed)" } else { "" };
    format!("{} {}{marker}", reply.status, reply.body)
}

async fn counts(payments: &Payments) -> Result<(), BoxError> {
    println!(
        "   charges={} handler attempts={}",
        payments.charges().await?,
        payments.attempts()
    );
    Ok(())
}
