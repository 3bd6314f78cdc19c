//! The layer's defaults are the documented ones: safe without any configuration.

use std::time::Duration;

use http::Method;
use retrykey_http::{IdempotencyLayer, InFlight, MemoryEntries, StoreLimits};

// POST and PATCH are covered, nothing else; 1 MiB bodies; 64 KiB stored; duplicates wait 15 s.
#[test]
fn layer_defaults() {
    let layer = IdempotencyLayer::new();
    let config = layer.config();
    assert!(config.covers(&Method::POST) && config.covers(&Method::PATCH));
    for method in [
        Method::GET,
        Method::PUT,
        Method::DELETE,
        Method::HEAD,
        Method::OPTIONS,
    ] {
        assert!(!config.covers(&method), "{method}");
    }
    assert_eq!(config.max_body_bytes(), 1 << 20);
    assert_eq!(config.max_stored_body_bytes(), 64 << 10);
    assert_eq!(config.in_flight(), InFlight::Wait(Duration::from_secs(15)));
    let keyless = http::Request::post("/payments")
        .body(())
        .unwrap()
        .into_parts()
        .0;
    assert!(
        !config.requires_key(&keyless),
        "no route requires a key unless configured"
    );
}

// The memory store keeps 10,000 entries and 64 MiB for 24 hours by default.
#[test]
fn store_defaults() {
    let limits = MemoryEntries::default().limits();
    assert_eq!(
        limits,
        StoreLimits {
            max_entries: 10_000,
            max_bytes: 64 << 20,
            retention: Duration::from_secs(24 * 60 * 60),
        }
    );
}

// The problems' `type` starts with a URN by default, and with the base a service sets.
#[tokio::test]
async fn problem_types_start_with_the_layer_s_base() {
    use http::{Request, Response};
    use retrykey_http::{Body, IdempotencyLayer, body::full};
    use tower::{ServiceBuilder, ServiceExt, service_fn};

    async fn reused_type(layer: IdempotencyLayer) -> String {
        let service = ServiceBuilder::new().layer(layer).service(service_fn(
            |_request: Request<Body>| async {
                Ok::<_, std::convert::Infallible>(
                    Response::builder().status(201).body(full("")).unwrap(),
                )
            },
        ));
        let post = |body: &'static str| {
            Request::post("/orders")
                .header("idempotency-key", "k-1")
                .body(full(body))
                .unwrap()
        };
        let _first = service.clone().oneshot(post("a")).await.unwrap();
        let reused = service.oneshot(post("b")).await.unwrap();
        assert_eq!(reused.status(), 422);
        let body = http_body_util::BodyExt::collect(reused.into_body())
            .await
            .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&body.to_bytes()).unwrap();
        json["type"].as_str().unwrap().to_owned()
    }
    assert_eq!(
        reused_type(IdempotencyLayer::new()).await,
        "urn:retrykey:problem:key-reused"
    );
    let own = IdempotencyLayer::builder()
        .problem_base("https://api.example.com/problems/")
        .build();
    assert_eq!(
        reused_type(own).await,
        "https://api.example.com/problems/key-reused"
    );
}
