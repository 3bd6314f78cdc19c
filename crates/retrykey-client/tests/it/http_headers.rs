//! The caller's headers, credentials included, travel on every attempt of an operation.

use crate::common::{self, recorder::Recorder, recorder::Reply};

use std::time::Duration;

use retrykey_client::adapters::{HeaderMap, HeaderValue, HttpAdapter, HttpRequest, KEY_HEADER};
use retrykey_client::{Client, Key, Policy};

const BUSY: &str =
    "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
const CREATED: &str = "HTTP/1.1 201 Created\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";

fn fast_policy() -> Policy {
    Policy::builder()
        .base(Duration::from_millis(1))
        .cap(Duration::from_millis(2))
        .build()
        .unwrap()
}

// Every attempt, retries included, carries the caller's headers once each, beside the one key.
#[tokio::test]
async fn caller_headers_on_every_attempt() {
    let server = Recorder::start(vec![
        Reply::Answer(BUSY),
        Reply::Answer(BUSY),
        Reply::Answer(CREATED),
    ])
    .await;
    let http = HttpAdapter::new();
    let client = Client::builder(fast_policy()).seed(31).build();
    let mut more = HeaderMap::new();
    more.insert("x-request-source", HeaderValue::from_static("billing"));
    let request = HttpRequest::put(server.url("/invoices/9"))
        .bearer_auth("s3cr3t-token")
        .header("x-tenant", "acme")
        .headers(more)
        .content_type("application/json")
        .body("{}");
    let key = Key::new("invoice-9").unwrap();
    let outcome = http.run_keyed(&client, key, &request).await.unwrap();
    let (value, _, attempts) = common::expect_succeeded(outcome);
    assert_eq!((value.status, attempts), (201, 3));

    let received = server.received();
    assert_eq!(received.len(), 3, "one request per attempt");
    for request in &received {
        assert_eq!(request.method, "PUT");
        assert_eq!(request.one("authorization"), "Bearer s3cr3t-token");
        assert_eq!(request.one("x-tenant"), "acme");
        assert_eq!(request.one("x-request-source"), "billing");
        assert_eq!(request.one("content-type"), "application/json");
        assert_eq!(request.one(KEY_HEADER), "invoice-9");
    }
}

// A repeated header name sends every value, as the caller added them.
#[tokio::test]
async fn repeated_header_sends_every_value() {
    let server = Recorder::start(vec![Reply::Answer(CREATED)]).await;
    let http = HttpAdapter::new();
    let client = Client::builder(fast_policy()).seed(32).build();
    let request = HttpRequest::get(server.url("/"))
        .header("accept", "application/json")
        .header("accept", "text/plain");
    http.run(&client, &request).await.unwrap();
    let received = server.received();
    assert_eq!(
        received[0].all("accept"),
        ["application/json", "text/plain"]
    );
}

// Credentials stay out of the request's Debug output, where logs would copy them.
#[test]
fn credentials_are_not_in_debug_output() {
    let request = HttpRequest::post("http://127.0.0.1:1/")
        .bearer_auth("s3cr3t-token")
        .header("cookie", "session=abc123");
    let shown = format!("{request:?}");
    assert!(!shown.contains("s3cr3t-token"), "{shown}");
    assert!(!shown.contains("abc123"), "{shown}");
}
