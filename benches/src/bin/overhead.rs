//! The layer's own CPU cost per request, without sockets: the payments service called directly,
//! bare and through the layer (fresh key, replay, no key), on one thread. Bounded: a fixed
//! number of calls per path.
//!
//! `cargo run --release -p retrykey-benches --bin overhead -- [--calls N] [--paths fresh,replay]`

use std::time::{Duration, Instant};

use clap::Parser;
use http::Request;
use retrykey_http::payments::Payments;
use retrykey_http::{Body, IdempotencyLayer, StoreLimits, body::full};
use tower::{Layer, Service, ServiceExt};

#[derive(Debug, Parser)]
struct Args {
    /// Calls per path per round.
    #[arg(long, default_value_t = 200_000)]
    calls: u32,
    /// Only these paths (comma-separated: bare, fresh, replay, keyless); default all. Useful
    /// under a profiler.
    #[arg(long, value_delimiter = ',')]
    paths: Vec<String>,
}

fn payment(key: Option<String>) -> Request<Body> {
    let mut request = Request::post("/payments").header("content-type", "application/json");
    if let Some(key) = key {
        request = request.header("idempotency-key", key);
    }
    request
        .body(full(r#"{"amount":5}"#))
        .expect("a valid request")
}

/// Mean time per call of `make` through `service`.
async fn per_call<S>(
    service: &mut S,
    calls: u32,
    mut make: impl FnMut(u32) -> Request<Body>,
) -> Duration
where
    S: Service<Request<Body>, Error = std::convert::Infallible>,
{
    let started = Instant::now();
    for i in 0..calls {
        let request = make(i);
        let response = ServiceExt::<Request<Body>>::ready(&mut *service)
            .await
            .expect("infallible")
            .call(request)
            .await;
        drop(response);
    }
    started.elapsed() / calls
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args = Args::parse();
    let payments = Payments::new(Duration::ZERO);
    let mut bare = payments.service();
    // The same steady state as `load`: records kept for one second.
    let limits = StoreLimits {
        max_entries: 10_000_000,
        max_bytes: usize::MAX,
        retention: Duration::from_secs(1),
    };
    let layer = IdempotencyLayer::builder().store_limits(limits).build();
    let mut layered = layer.layer(payments.service());
    println!(
        "in-process, one thread, {} calls per path; second round shown",
        args.calls
    );
    let wanted = |path: &str| args.paths.is_empty() || args.paths.iter().any(|p| p == path);
    let mut shown = Vec::new();
    for round in 0..2 {
        shown.clear();
        if wanted("bare") {
            let took = per_call(&mut bare, args.calls, |_| payment(None)).await;
            shown.push(format!("bare handler {took:?}"));
        }
        if wanted("fresh") {
            let took = per_call(&mut layered, args.calls, |i| {
                payment(Some(format!("k{round}-{i}")))
            })
            .await;
            shown.push(format!("fresh key {took:?}"));
        }
        if wanted("replay") {
            let took = per_call(&mut layered, args.calls, |_| payment(Some("same".into()))).await;
            shown.push(format!("replay {took:?}"));
        }
        if wanted("keyless") {
            let took = per_call(&mut layered, args.calls, |_| payment(None)).await;
            shown.push(format!("no key {took:?}"));
        }
    }
    println!("{} per call", shown.join(", "));
}
