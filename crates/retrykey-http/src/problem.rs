//! The layer's own answers, as `application/problem+json` (RFC 9457) with a stable `type`.
//!
//! Clients branch on `type` (or `status`), never on `title` or `detail` text.
//!
//! # Example
//!
//! ```
//! use retrykey_http::Problem;
//!
//! let response = Problem::KeyReused.response(None);
//! assert_eq!(response.status(), 422);
//! assert_eq!(Problem::KeyReused.type_uri(), "urn:retrykey:problem:key-reused");
//! ```

use http::{HeaderValue, Response, StatusCode, header};

use crate::body::{Body, full};

pub use retrykey_server::{PROBLEM_JSON, TYPE_BASE};

tokio::task_local! {
    /// The `type` base of the layer answering the request being polled (`Builder::problem_base`).
    static BASE: std::sync::Arc<str>;
}

/// Runs `answer` with `base` as the `type` base of the problems it writes.
pub(crate) fn with_base<F: std::future::Future>(
    base: std::sync::Arc<str>,
    answer: F,
) -> tokio::task::futures::TaskLocalFuture<std::sync::Arc<str>, F> {
    BASE.scope(base, answer)
}

// ANCHOR: problems
/// Every answer the layer gives on its own, without (or instead of) the inner service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// 400: this route requires an `Idempotency-Key` and the request has none.
    KeyMissing,
    /// 400: the `Idempotency-Key` header is empty, malformed, too long or repeated.
    KeyInvalid,
    /// 413: the request body is larger than the layer buffers.
    BodyTooLarge,
    /// 400: the request body stream broke before its end.
    BodyUnreadable,
    /// 408: the request body did not arrive within the server's body timeout.
    BodyTimedOut,
    /// 422: the key was first used with a different request.
    KeyReused,
    /// 409: the first request with this key is still running (the "reject" policy).
    InProgress,
    /// 503: the first request with this key did not finish within the wait deadline.
    WaitTimedOut,
    /// 503: the first request with this key failed; the key is free, retry.
    FirstAttemptFailed,
    /// 503: the response store is full of live records; nothing was evicted.
    StoreFull,
    /// 503: the response store failed; the request was refused before any work.
    StoreUnavailable,
    /// 500: the inner service failed or panicked; the key was released.
    HandlerFailed,
    /// The replay of a response whose body was not kept: the original status and `Location`.
    ResponseNotStored,
}
// ANCHOR_END: problems

impl Problem {
    /// The status this problem answers with (a not-stored replay keeps the original one).
    pub fn status(self) -> StatusCode {
        match self {
            Problem::KeyMissing | Problem::KeyInvalid | Problem::BodyUnreadable => {
                StatusCode::BAD_REQUEST
            }
            Problem::BodyTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Problem::BodyTimedOut => StatusCode::REQUEST_TIMEOUT,
            Problem::KeyReused => StatusCode::UNPROCESSABLE_ENTITY,
            Problem::InProgress => StatusCode::CONFLICT,
            Problem::WaitTimedOut
            | Problem::FirstAttemptFailed
            | Problem::StoreFull
            | Problem::StoreUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            Problem::HandlerFailed => StatusCode::INTERNAL_SERVER_ERROR,
            Problem::ResponseNotStored => StatusCode::OK,
        }
    }

    /// The stable last segment of the `type` URI.
    pub fn slug(self) -> &'static str {
        match self {
            Problem::KeyMissing => "key-missing",
            Problem::KeyInvalid => "key-invalid",
            Problem::BodyTooLarge => "body-too-large",
            Problem::BodyUnreadable => "body-unreadable",
            Problem::BodyTimedOut => "body-timed-out",
            Problem::KeyReused => "key-reused",
            Problem::InProgress => "in-progress",
            Problem::WaitTimedOut => "wait-timed-out",
            Problem::FirstAttemptFailed => "first-attempt-failed",
            Problem::StoreFull => "store-full",
            Problem::StoreUnavailable => "store-unavailable",
            Problem::HandlerFailed => "handler-failed",
            Problem::ResponseNotStored => "response-not-stored",
        }
    }

    /// A short human summary, the same for every occurrence.
    pub fn title(self) -> &'static str {
        match self {
            Problem::KeyMissing => "This endpoint requires an Idempotency-Key header",
            Problem::KeyInvalid => "The Idempotency-Key header is invalid",
            Problem::BodyTooLarge => "The request body is too large",
            Problem::BodyUnreadable => "The request body could not be read",
            Problem::BodyTimedOut => "The request body did not arrive in time",
            Problem::KeyReused => "Idempotency-Key was used with a different request",
            Problem::InProgress => "A request with this Idempotency-Key is still in progress",
            Problem::WaitTimedOut => "The first request with this Idempotency-Key is still running",
            Problem::FirstAttemptFailed => "The first attempt failed; retry",
            Problem::StoreFull => "Too many requests are being remembered; retry later",
            Problem::StoreUnavailable => "Idempotency records are unavailable; retry later",
            Problem::HandlerFailed => "The request failed",
            Problem::ResponseNotStored => "The original response body was not kept",
        }
    }

    /// The full `type` URI: the answering layer's base (by default [`TYPE_BASE`]), then the slug.
    pub fn type_uri(self) -> String {
        BASE.try_with(|base| format!("{base}{}", self.slug()))
            .unwrap_or_else(|_| format!("{TYPE_BASE}{}", self.slug()))
    }

    /// Seconds a client should wait before retrying, for the answers that invite a retry.
    pub fn retry_after(self) -> Option<u32> {
        match self {
            Problem::InProgress
            | Problem::WaitTimedOut
            | Problem::FirstAttemptFailed
            | Problem::StoreFull
            | Problem::StoreUnavailable => Some(1),
            _ => None,
        }
    }

    /// The problem as a complete response, with an optional `detail` line.
    pub fn response(self, detail: Option<&str>) -> Response<Body> {
        self.response_with_status(self.status(), detail)
    }

    /// The problem with another status (used to replay a response that was not kept whole).
    pub fn response_with_status(self, status: StatusCode, detail: Option<&str>) -> Response<Body> {
        // A store failure is reported where it happens, with its error; a replay is a replay.
        if !matches!(self, Problem::StoreUnavailable | Problem::ResponseNotStored) {
            crate::observe::refused(self.slug(), status);
        }
        let mut response = problem_response(status, &self.type_uri(), self.title(), detail);
        if let Some(seconds) = self.retry_after() {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }

    /// The JSON document, fields in a fixed order so demo output is stable.
    pub fn body(self, status: StatusCode, detail: Option<&str>) -> String {
        problem_json(status, &self.type_uri(), self.title(), detail)
    }
}

/// A problem document as a complete response: the layer's own answers, the demo handler's, and
/// those of other services in the lab (the outbox's consumer), so that every problem reads alike.
pub fn problem_response(
    status: StatusCode,
    type_uri: &str,
    title: &str,
    detail: Option<&str>,
) -> Response<Body> {
    let mut response = Response::new(full(problem_json(status, type_uri, title, detail)));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
    response
}

/// The JSON text of a problem document: `type`, `title`, `status`, then `detail` if any.
fn problem_json(status: StatusCode, type_uri: &str, title: &str, detail: Option<&str>) -> String {
    let quote = |text: &str| serde_json::Value::from(text).to_string();
    let mut body = format!(
        "{{\"type\":{},\"title\":{},\"status\":{}",
        quote(type_uri),
        quote(title),
        status.as_u16()
    );
    if let Some(detail) = detail {
        body.push_str(&format!(",\"detail\":{}", quote(detail)));
    }
    body.push_str("}\n");
    body
}
