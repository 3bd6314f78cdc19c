//! The layer composes with axum 0.8: `Router::layer`, extractors and all.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::extract::{Json, State};
use axum::http::StatusCode;
use axum::routing::post;
use retrykey_http::IdempotencyLayer;
use retrykey_server::loopback::LoopbackClient;

async fn pay(
    State(charges): State<Arc<AtomicU64>>,
    Json(body): Json<serde_json::Value>,
) -> (StatusCode, String) {
    let n = charges.fetch_add(1, Ordering::SeqCst) + 1;
    (
        StatusCode::CREATED,
        format!("payment {n} of {}", body["amount"]),
    )
}

// An axum Router behind the layer charges once per key and replays the answer.
#[tokio::test]
async fn axum_router_behind_the_layer() {
    let charges = Arc::new(AtomicU64::new(0));
    let app = Router::new()
        .route("/payments", post(pay).get(|| async { "listed" }))
        .with_state(Arc::clone(&charges))
        .layer(IdempotencyLayer::new());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let client = LoopbackClient::new(url);

    let key = [("idempotency-key", "axum-1")];
    let first = client
        .post("/payments", &key, r#"{"amount":7}"#)
        .await
        .unwrap();
    let retry = client
        .post("/payments", &key, r#"{ "amount": 7 }"#)
        .await
        .unwrap();
    let changed = client
        .post("/payments", &key, r#"{"amount":8}"#)
        .await
        .unwrap();
    let listed = client.get("/payments", &key).await.unwrap();
    assert_eq!((first.status, first.body.as_str()), (201, "payment 1 of 7"));
    assert_eq!(
        (retry.status, retry.body.as_str(), retry.replayed()),
        (201, "payment 1 of 7", true)
    );
    assert_eq!(changed.status, 422);
    assert_eq!((listed.status, listed.body.as_str()), (200, "listed"));
    assert_eq!(charges.load(Ordering::SeqCst), 1);
    server.abort();
}
