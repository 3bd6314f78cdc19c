//! Answers that say "not processed, try again" are never stored: 408 and 429 release the key
//! like a 5xx does, so the client's retry with the same key runs the handler again; so does
//! any answer the handler marks `NotKept`.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use http::{Request, Response, StatusCode};
use retrykey_http::{Body, IdempotencyLayer, NotKept, body::full};
use tower::{ServiceBuilder, ServiceExt, service_fn};

/// Sends the same keyed POST twice to a handler whose first answer is `first` and whose
/// second is 201; returns the two statuses, whether the second was a replay, and the calls.
async fn first_then_created(first: StatusCode) -> (StatusCode, StatusCode, bool, usize) {
    first_then_created_marked(first, false).await
}

/// As [`first_then_created`], the first answer marked [`NotKept`] when `not_kept`.
async fn first_then_created_marked(
    first: StatusCode,
    not_kept: bool,
) -> (StatusCode, StatusCode, bool, usize) {
    let calls = Arc::new(AtomicUsize::new(0));
    let handler_calls = Arc::clone(&calls);
    let service = ServiceBuilder::new()
        .layer(IdempotencyLayer::new())
        .service(service_fn(move |_request: Request<Body>| {
            let call = handler_calls.fetch_add(1, Ordering::SeqCst);
            let status = if call == 0 {
                first
            } else {
                StatusCode::CREATED
            };
            let mut response = Response::builder().status(status).body(full("")).unwrap();
            if call == 0 && not_kept {
                response.extensions_mut().insert(NotKept);
            }
            async move { Ok::<_, Infallible>(response) }
        }));
    let post = || {
        Request::post("/payments")
            .header("idempotency-key", "k-1")
            .body(full("{\"amount\":5}"))
            .unwrap()
    };
    let one = service.clone().oneshot(post()).await.unwrap();
    let two = service.clone().oneshot(post()).await.unwrap();
    let replayed = two.headers().contains_key("idempotent-replayed");
    (
        one.status(),
        two.status(),
        replayed,
        calls.load(Ordering::SeqCst),
    )
}

#[tokio::test]
async fn a_429_releases_the_key() {
    let (one, two, replayed, calls) = first_then_created(StatusCode::TOO_MANY_REQUESTS).await;
    assert_eq!(
        (one, two),
        (StatusCode::TOO_MANY_REQUESTS, StatusCode::CREATED)
    );
    assert!(!replayed, "the 201 is the retry's own answer");
    assert_eq!(calls, 2, "the retry ran the handler");
}

#[tokio::test]
async fn a_408_releases_the_key() {
    let (one, two, replayed, calls) = first_then_created(StatusCode::REQUEST_TIMEOUT).await;
    assert_eq!(
        (one, two),
        (StatusCode::REQUEST_TIMEOUT, StatusCode::CREATED)
    );
    assert!(!replayed);
    assert_eq!(calls, 2);
}

// The control: any other 4xx is a real answer, stored and replayed.
#[tokio::test]
async fn a_409_is_kept_and_replayed() {
    let (one, two, replayed, calls) = first_then_created(StatusCode::CONFLICT).await;
    assert_eq!((one, two), (StatusCode::CONFLICT, StatusCode::CONFLICT));
    assert!(replayed);
    assert_eq!(calls, 1, "the retry got the stored answer");
}

#[tokio::test]
async fn a_422_marked_not_kept_releases_the_key() {
    let unprocessable = StatusCode::UNPROCESSABLE_ENTITY;
    let (one, two, replayed, calls) = first_then_created_marked(unprocessable, true).await;
    assert_eq!((one, two), (unprocessable, StatusCode::CREATED));
    assert!(!replayed, "the 201 is the retry's own answer");
    assert_eq!(calls, 2, "the retry ran the handler");
}
