//! The HTTP adapter sends any method, with the body and the operation key on each.

use crate::common::{self, recorder::Recorder, recorder::Reply};

use retrykey_client::adapters::{HttpAdapter, HttpRequest, KEY_HEADER, Method};
use retrykey_client::{Client, Error, Key, Outcome, Policy};

const OK: &str = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";

// Every method a service exposes arrives as that method, with its body and the operation key.
#[tokio::test]
async fn every_method_arrives_as_sent() {
    let methods = [
        Method::GET,
        Method::POST,
        Method::PUT,
        Method::PATCH,
        Method::DELETE,
    ];
    let server = Recorder::start(methods.iter().map(|_| Reply::Answer(OK)).collect()).await;
    let http = HttpAdapter::new();
    let client = Client::builder(Policy::default()).seed(21).build();
    for (n, method) in methods.iter().enumerate() {
        let request = HttpRequest::new(method.clone(), server.url("/documents/7"))
            .content_type("application/json")
            .body(format!("{{\"n\":{n}}}"));
        let key = Key::new(format!("op-{n}")).unwrap();
        let outcome = http.run_keyed(&client, key, &request).await.unwrap();
        let (value, _, attempts) = common::expect_succeeded(outcome);
        assert_eq!(
            (value.status, value.body.as_slice(), attempts),
            (200, &b"ok"[..], 1)
        );
    }
    let received = server.received();
    let seen: Vec<(&str, &str, &str, &[u8])> = received
        .iter()
        .map(|r| {
            (
                r.method.as_str(),
                r.path.as_str(),
                r.one(KEY_HEADER),
                r.body.as_slice(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("GET", "/documents/7", "op-0", &b"{\"n\":0}"[..]),
            ("POST", "/documents/7", "op-1", b"{\"n\":1}"),
            ("PUT", "/documents/7", "op-2", b"{\"n\":2}"),
            ("PATCH", "/documents/7", "op-3", b"{\"n\":3}"),
            ("DELETE", "/documents/7", "op-4", b"{\"n\":4}"),
        ]
    );
}

// The POST shorthand keeps working: method, content type, body and key as before.
#[tokio::test]
async fn post_shorthand_still_posts() {
    let server = Recorder::start(vec![Reply::Answer(OK)]).await;
    let http = HttpAdapter::new();
    let client = Client::builder(Policy::default()).seed(22).build();
    let key = Key::new("pay-123").unwrap();
    let url = server.url("/payments");
    let outcome = http
        .run_with_key(&client, key, &url, "text/plain", b"five".to_vec())
        .await
        .unwrap();
    assert_eq!(outcome.kind(), "succeeded");
    let received = server.received();
    assert_eq!(received.len(), 1);
    let request = &received[0];
    assert_eq!(
        (
            request.method.as_str(),
            request.one("content-type"),
            request.one(KEY_HEADER),
            request.body.as_slice()
        ),
        ("POST", "text/plain", "pay-123", &b"five"[..])
    );
}

// A request that HTTP cannot carry is refused before the first attempt: nothing is sent.
#[tokio::test]
async fn unsendable_request_is_refused_before_sending() {
    let server = Recorder::start(vec![Reply::Answer(OK)]).await;
    let http = HttpAdapter::new();
    let client = Client::builder(Policy::default()).seed(23).build();
    let refused = [
        HttpRequest::get(server.url("/")).header("bad header", "x"),
        HttpRequest::get(server.url("/")).header("x-ok", "line\nbreak"),
        HttpRequest::get(server.url("/")).header(KEY_HEADER, "not-the-operation-key"),
        HttpRequest::get("not a url"),
    ];
    for request in &refused {
        let result = http.run(&client, request).await;
        assert!(
            matches!(result, Err(Error::InvalidRequest { .. })),
            "{request:?}: {result:?}"
        );
    }
    assert!(server.received().is_empty(), "a refused request was sent");
    // The same checks hold when the caller runs the attempts itself: refused, never sent.
    let outcome = client.run(|a| http.send(a, &refused[0])).await;
    assert!(
        matches!(
            outcome,
            Outcome::Unknown {
                may_have_applied: false,
                ..
            }
        ),
        "{outcome:?}"
    );
    assert!(server.received().is_empty(), "a refused request was sent");
}
