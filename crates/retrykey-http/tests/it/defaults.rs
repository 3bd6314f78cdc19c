//! The layer's defaults are the documented ones: safe without any configuration.

use std::time::Duration;

use http::Method;
use retrykey_http::{IdempotencyLayer, InFlight, MemoryEntries, StoreLimits};

// POST and PATCH are covered, nothing else; 1 MiB bodies; 64 KiB stored; duplicates wait 10 s.
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
