//! The payments server: the demo handler behind the idempotency layer, on a real socket.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use http::Method;
use retrykey_http::payments::Payments;
use retrykey_http::{IdempotencyLayer, InFlight, loopback};
use tokio::net::TcpListener;
use tower_layer::Layer;

/// Serve `POST /payments` and `GET /payments/count` behind the Idempotency-Key layer.
#[derive(Debug, Parser)]
struct Args {
    /// Address to listen on (port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Milliseconds each charge takes.
    #[arg(long, default_value_t = 50)]
    work_ms: u64,
    /// Answer duplicates of a running request with 409 instead of waiting for it.
    #[arg(long)]
    reject_in_flight: bool,
    /// Refuse `POST /payments` without an Idempotency-Key (400).
    #[arg(long)]
    require_key: bool,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let mut builder = IdempotencyLayer::builder();
    if args.reject_in_flight {
        builder = builder.in_flight(InFlight::Reject);
    }
    if args.require_key {
        builder = builder
            .require_key(|parts| parts.method == Method::POST && parts.uri.path() == "/payments");
    }
    let payments = Payments::new(Duration::from_millis(args.work_ms));
    let service = builder.build().layer(payments.service());

    let listener = TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    println!("listening on http://{}", listener.local_addr()?);
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    loopback::serve(listener, service, shutdown).await;
    println!(
        "stopped: charges={} attempts={}",
        payments.charges().await?,
        payments.attempts()
    );
    Ok(())
}
