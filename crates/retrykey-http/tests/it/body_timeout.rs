//! A request body that does not arrive within the server's body timeout is answered 408
//! `body-timed-out`, by the layer for a keyed request and by the payments handler without a
//! key, and leaves nothing behind: no key entry, no handler run, no charge.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body::Frame;
use http_body_util::BodyExt;
use retrykey_http::body::boxed;
use retrykey_http::payments::Payments;
use retrykey_http::{IdempotencyLayer, MemoryEntries, PROBLEM_JSON, StoreLimits};
use retrykey_server::timeouts::Deadline;
use tower::ServiceExt;
use tower_layer::Layer;

/// A body whose bytes never come: a client that sent its head and stopped.
struct Stalled;

impl http_body::Body for Stalled {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Pending
    }
}

/// Sends a POST whose body stalls past a 50 ms deadline; returns the status and the body.
async fn stalled_post(
    key: Option<&str>,
) -> (StatusCode, String, Arc<MemoryEntries>, Arc<Payments>) {
    let store = Arc::new(MemoryEntries::new(StoreLimits::default()));
    let payments = Payments::new(Duration::ZERO);
    let service = IdempotencyLayer::builder()
        .shared_store(store.clone())
        .build()
        .layer(payments.service());
    let mut request = Request::post("/payments").header("content-type", "application/json");
    if let Some(key) = key {
        request = request.header("idempotency-key", key);
    }
    let body = boxed(Deadline::new(Stalled, Duration::from_millis(50)));
    let response = service.oneshot(request.body(body).unwrap()).await.unwrap();
    let status = response.status();
    assert_eq!(response.headers()["content-type"], PROBLEM_JSON);
    let text = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        String::from_utf8_lossy(&text).into_owned(),
        store,
        payments,
    )
}

// With a key, the layer answers 408 before reserving anything: the key stays free.
#[tokio::test]
async fn a_keyed_body_that_stalls_gets_408_and_takes_no_key() {
    let (status, body, store, payments) = stalled_post(Some("k-1")).await;
    assert_eq!(status, StatusCode::REQUEST_TIMEOUT);
    assert!(
        body.contains("urn:retrykey:problem:body-timed-out"),
        "{body}"
    );
    assert_eq!((store.len(), payments.attempts()), (0, 0));
    assert_eq!(payments.charges().await.unwrap(), 0);
}

// Without a key, the payments handler reads the body itself and answers the same 408.
#[tokio::test]
async fn a_keyless_body_that_stalls_gets_408_and_charges_nothing() {
    let (status, body, store, payments) = stalled_post(None).await;
    assert_eq!(status, StatusCode::REQUEST_TIMEOUT);
    assert!(
        body.contains("urn:retrykey:problem:body-timed-out"),
        "{body}"
    );
    assert_eq!((store.len(), payments.attempts()), (0, 1));
    assert_eq!(payments.charges().await.unwrap(), 0);
}
