//! The consumer's HTTP endpoint: one delivery in, one conversion (or its replay) out.
//!
//! `POST /conversions` checks the delivery before it touches the database: the event id in
//! `Idempotency-Key`, a JSON body that names the same event, a job that can be converted. A
//! refusal is a problem document and writes nothing. Then the dedup transaction runs (awaited
//! on PostgreSQL; on a blocking thread for SQLite, whose calls block), and the answer says
//! whether this delivery converted (201) or found the conversion an earlier one made (200,
//! `Idempotent-Replayed`).
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use retrykey_converter::{ConverterDb, service};
//! use retrykey_server::loopback::{LoopbackClient, Server};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! # let path = std::env::temp_dir().join(format!("retrykey-service-doc-{}.sqlite", std::process::id()));
//! # retrykey_durable::sqlite::remove_files(&path);
//! let db = Arc::new(ConverterDb::open_sqlite(&path)?);
//! let server = Server::start(service::router(db.clone())).await?;
//! let client = LoopbackClient::new(server.url());
//! let body = r#"{"event":"evt-1","job":"report.docx","units":3}"#;
//! let first = client.post("/conversions", &[("idempotency-key", "evt-1")], body).await?;
//! let again = client.post("/conversions", &[("idempotency-key", "evt-1")], body).await?;
//! assert_eq!((first.status, again.status), (201, 200));
//! assert_eq!(first.body, again.body);
//! assert_eq!(db.count()?, 1);
//! server.stop().await;
//! # drop(db);
//! # retrykey_durable::sqlite::remove_files(&path);
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http::{HeaderMap, HeaderValue, StatusCode, header};
use retrykey_http::{IDEMPOTENT_REPLAYED, IdempotencyKey};

use crate::crash::{Hooks, Point};
use crate::problem::Refusal;
use retrykey_wire::{CONVERSIONS_COUNT_PATH, CONVERSIONS_PATH, Conversion, ConversionRequest};

use crate::ConverterDb;

/// The largest body a delivery may have: a conversion request is well under 1 KiB.
pub const MAX_BODY_BYTES: usize = 16 * 1024;

#[derive(Clone)]
struct Consumer {
    db: Arc<ConverterDb>,
    hooks: Hooks,
}

/// The consumer's routes over `db`: `POST /conversions` and `GET /conversions/count`.
pub fn router(db: Arc<ConverterDb>) -> Router {
    router_with_hooks(db, Hooks::none())
}

/// The same, calling `hooks` at the crash point: the seam the in-process checks crash through.
#[doc(hidden)]
pub fn router_with_hooks(db: Arc<ConverterDb>, hooks: Hooks) -> Router {
    Router::new()
        .route(CONVERSIONS_PATH, post(deliver))
        .route(CONVERSIONS_COUNT_PATH, get(count))
        .fallback(|| async { refusal_response(Refusal::NotFound, None) })
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(Consumer { db, hooks })
}

/// One delivery of one event.
async fn deliver(
    State(consumer): State<Consumer>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let request = match read_delivery(&headers, body) {
        Ok(request) => request,
        Err((refusal, detail)) => return refusal_response(refusal, Some(&detail)),
    };
    let converted = match consumer.db.convert_async(&request).await {
        Ok(converted) => converted,
        Err(error) => {
            eprintln!("converter: {error}");
            return refusal_response(Refusal::Unavailable, None);
        }
    };
    // The conversion and its record have committed; the dispatcher has not heard yet. A crash
    // here is what the redelivery must survive.
    consumer.hooks.at(Point::Converted);
    let status = if converted.replayed {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    let conversion = Conversion {
        event: request.event,
        conversion: converted.conversion,
    };
    let mut response = (status, axum::Json(&conversion)).into_response();
    let location = format!("{CONVERSIONS_PATH}/{}", conversion.conversion);
    if let Ok(location) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    if converted.replayed {
        response
            .headers_mut()
            .insert(IDEMPOTENT_REPLAYED, HeaderValue::from_static("true"));
    }
    response
}

/// The delivery's conversion request, or why it is refused: nothing here touches the database.
fn read_delivery(
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<ConversionRequest, (Refusal, String)> {
    let key = match IdempotencyKey::from_headers(headers) {
        Ok(Some(key)) => key,
        Ok(None) => {
            let detail = "send the event id as Idempotency-Key".to_owned();
            return Err((Refusal::KeyMissing, detail));
        }
        Err(problem) => return Err((Refusal::KeyInvalid, problem.to_string())),
    };
    let body = body.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            let detail = format!("at most {MAX_BODY_BYTES} bytes");
            (Refusal::BodyTooLarge, detail)
        } else {
            (Refusal::BodyInvalid, rejection.body_text())
        }
    })?;
    let request: ConversionRequest =
        serde_json::from_slice(&body).map_err(|error| (Refusal::BodyInvalid, error.to_string()))?;
    // No fingerprint of the body, unlike the Idempotency-Key layer's: an event never changes
    // (its id is new for every job and its row is written once), so every delivery of it
    // carries the same body. What must hold is that the key names the body's event.
    if request.event != key.as_str() {
        let detail = "the Idempotency-Key and the body's event differ".to_owned();
        return Err((Refusal::KeyMismatch, detail));
    }
    request
        .check()
        .map_err(|reason| (Refusal::JobInvalid, reason))?;
    Ok(request)
}

/// `GET /conversions/count`: `{"conversions": N}`.
async fn count(State(consumer): State<Consumer>) -> Response {
    match consumer.db.count_async().await {
        Ok(count) => axum::Json(serde_json::json!({ "conversions": count })).into_response(),
        Err(error) => {
            eprintln!("converter: {error}");
            refusal_response(Refusal::Unavailable, None)
        }
    }
}

fn refusal_response(refusal: Refusal, detail: Option<&str>) -> Response {
    refusal.response(detail).map(axum::body::Body::new)
}
