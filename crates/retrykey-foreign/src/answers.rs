//! What the checkout answers: the answers it keeps for a key, and the 503 it keeps nothing for.

use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, StatusCode, header};
use retrykey_http::{NotKept, Problem, StoredResponse};

use crate::{BooksError, Progress};

/// The answer of a paid operation.
pub fn paid(progress: &Progress) -> StoredResponse {
    let body = serde_json::json!({
        "order": progress.order,
        "charge": progress.charge,
        "status": "paid",
    });
    answer(StatusCode::CREATED, &body.to_string())
}

/// The answer of an operation the provider refused with `status`.
pub fn declined(order: i64, status: u16) -> StoredResponse {
    let body = serde_json::json!({"order": order, "status": "declined", "provider": status});
    answer(StatusCode::PAYMENT_REQUIRED, &body.to_string())
}

/// What a finished operation answers when its key's answer is no longer stored. The row keeps
/// no refusal's status, so a rebuilt decline names the provider's usual 402.
pub fn finished(progress: &Progress) -> Response {
    match progress.charge {
        Some(_) => paid(progress).response().into_response(),
        None => declined(progress.order, 402).response().into_response(),
    }
}

/// 503 with `Retry-After`: nothing is kept for the key, and the next attempt resumes.
pub fn unavailable(why: &str) -> Response {
    let body = serde_json::json!({ "error": why }).to_string();
    let mut response = json(StatusCode::SERVICE_UNAVAILABLE, &body);
    (response.headers_mut()).insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// What an attempt whose phase did not commit answers: 503 when another attempt holds the key
/// (it answers) or the store failed, so that the client asks again; 422 when the key's
/// operation belongs to another request, an answer the key does not keep, so that the request
/// that began the operation still resumes it.
pub fn uncommitted(error: &BooksError) -> Response {
    match error {
        BooksError::Reused => {
            let mut response = Problem::KeyReused.response(None).into_response();
            response.extensions_mut().insert(NotKept);
            response
        }
        BooksError::Fenced => unavailable("try again"),
        BooksError::Store(_) => {
            tracing::error!(%error, "a checkout phase did not commit");
            unavailable("try again")
        }
    }
}

fn answer(status: StatusCode, body: &str) -> StoredResponse {
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    StoredResponse::new(status, &headers, body.as_bytes())
}

pub(crate) fn json(status: StatusCode, body: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_owned(),
    )
        .into_response()
}
