//! The consumer's refusals, as `application/problem+json` with a stable `type`, in the same form
//! as the Idempotency-Key layer's.
//!
//! The dispatcher branches on the status only: a 4xx is definitive (the same delivery can never
//! succeed, so an operator must look at it), a 503 with `Retry-After` is "come back later".
//!
//! ```
//! use retrykey_converter::problem::Refusal;
//!
//! assert_eq!(Refusal::KeyMismatch.status(), 422);
//! assert_eq!(Refusal::Unavailable.retry_after(), Some(1));
//! ```

use http::{HeaderValue, Response, StatusCode, header};
use retrykey_http::{Body, TYPE_BASE, problem_response};

/// Every answer of `POST /conversions` that is not a conversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// 400: no `Idempotency-Key`: without the event id there is nothing to deduplicate on.
    KeyMissing,
    /// 400: the `Idempotency-Key` header is empty, malformed, too long or repeated.
    KeyInvalid,
    /// 400: the body is not a JSON conversion request.
    BodyInvalid,
    /// 413: the body is larger than any conversion request.
    BodyTooLarge,
    /// 422: the key is not the body's event id, so a retry could not be recognised.
    KeyMismatch,
    /// 422: the job name or its units are not acceptable.
    JobInvalid,
    /// 503: the database failed; nothing was converted, or the conversion committed and the
    /// next delivery will be told so. Retry.
    Unavailable,
    /// 404: no such endpoint.
    NotFound,
}

impl Refusal {
    /// The status this refusal answers with.
    pub fn status(self) -> StatusCode {
        match self {
            Self::KeyMissing | Self::KeyInvalid | Self::BodyInvalid => StatusCode::BAD_REQUEST,
            Self::BodyTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::KeyMismatch | Self::JobInvalid => StatusCode::UNPROCESSABLE_ENTITY,
            Self::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            Self::NotFound => StatusCode::NOT_FOUND,
        }
    }

    /// The stable last segment of the `type` URI.
    pub fn slug(self) -> &'static str {
        match self {
            Self::KeyMissing => "key-missing",
            Self::KeyInvalid => "key-invalid",
            Self::BodyInvalid => "body-invalid",
            Self::BodyTooLarge => "body-too-large",
            Self::KeyMismatch => "key-not-event",
            Self::JobInvalid => "job-invalid",
            Self::Unavailable => "store-unavailable",
            Self::NotFound => "not-found",
        }
    }

    /// A short human summary, the same for every occurrence.
    pub fn title(self) -> &'static str {
        match self {
            Self::KeyMissing => "A delivery needs an Idempotency-Key header: the event id",
            Self::KeyInvalid => "The Idempotency-Key header is invalid",
            Self::BodyInvalid => "The body is not a conversion request",
            Self::BodyTooLarge => "The request body is too large",
            Self::KeyMismatch => "The Idempotency-Key must be the event id of the body",
            Self::JobInvalid => "The job cannot be converted",
            Self::Unavailable => "Conversions are unavailable; retry later",
            Self::NotFound => "No such endpoint",
        }
    }

    /// Seconds the dispatcher should wait before delivering again, where a retry can help.
    pub fn retry_after(self) -> Option<u32> {
        (self == Self::Unavailable).then_some(1)
    }

    /// The refusal as a complete response, with an optional `detail` line.
    pub fn response(self, detail: Option<&str>) -> Response<Body> {
        let type_uri = format!("{TYPE_BASE}{}", self.slug());
        let mut response = problem_response(self.status(), &type_uri, self.title(), detail);
        if let Some(seconds) = self.retry_after() {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}
