//! A response as the store keeps it, and how it is replayed.
//!
//! # Example
//!
//! ```
//! use bytes::Bytes;
//! use http::{Response, StatusCode};
//! use retrykey_http::StoredResponse;
//!
//! let original = Response::builder()
//!     .status(201)
//!     .header("content-type", "application/json")
//!     .header("set-cookie", "session=abc")
//!     .body(())?;
//! let (parts, ()) = original.into_parts();
//! let stored = StoredResponse::whole(&parts, Bytes::from_static(b"{\"payment\":1}"));
//!
//! let replay = stored.replay();
//! assert_eq!(replay.status(), StatusCode::CREATED);
//! assert_eq!(replay.headers()["idempotent-replayed"], "true");
//! assert!(replay.headers().get("set-cookie").is_none()); // never replayed
//! # Ok::<(), http::Error>(())
//! ```

use bytes::Bytes;
use http::response::Parts;
use http::{HeaderMap, HeaderName, HeaderValue, Response, StatusCode, header};

use crate::Problem;
use crate::body::{Body, full};

/// Marks a replayed answer. Informational: the replay *is* the real result.
pub const IDEMPOTENT_REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

/// Headers that belong to one connection or one moment, never to the stored answer.
fn never_replayed(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "set-cookie"
            | "date"
            | "connection"
            | "keep-alive"
            | "proxy-connection"
            | "transfer-encoding"
            | "upgrade"
            | "te"
            | "trailer"
            | "proxy-authenticate"
            | "content-length" // recomputed from the stored body
    )
}

/// The outcome of a first attempt, kept so every retry gets the same answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResponse {
    /// The original status.
    pub status: StatusCode,
    /// The original headers, minus those in the not-replayed list.
    pub headers: HeaderMap,
    /// The original body, or empty when `whole` is false.
    pub body: Bytes,
    /// False when the body was not kept (too large, or broken mid-stream): a replay then
    /// carries only status, `Location` and a short problem body saying so.
    pub whole: bool,
}

impl StoredResponse {
    /// Keeps a complete response.
    pub fn whole(parts: &Parts, body: Bytes) -> Self {
        Self {
            status: parts.status,
            headers: replayable(&parts.headers),
            body,
            whole: true,
        }
    }

    /// Keeps the summary of a response whose body was too large: status and `Location`.
    pub fn summary(parts: &Parts) -> Self {
        let mut headers = HeaderMap::new();
        if let Some(location) = parts.headers.get(header::LOCATION) {
            headers.insert(header::LOCATION, location.clone());
        }
        Self {
            status: parts.status,
            headers,
            body: Bytes::new(),
            whole: false,
        }
    }

    /// Roughly how many bytes this record occupies, for the store's byte budget.
    pub fn size(&self) -> usize {
        let headers: usize = self
            .headers
            .iter()
            .map(|(name, value)| name.as_str().len() + value.len() + 32)
            .sum();
        self.body.len() + headers + 64
    }

    /// The answer to a retry: the stored response, marked `Idempotent-Replayed: true`.
    pub fn replay(&self) -> Response<Body> {
        let mut response = if self.whole {
            let mut response = Response::new(full(self.body.clone()));
            *response.status_mut() = self.status;
            // Room for the marker below, so adding it does not grow the map again.
            let headers = response.headers_mut();
            headers.reserve(self.headers.len() + 1);
            for (name, value) in &self.headers {
                headers.append(name, value.clone());
            }
            response
        } else {
            let detail = "The first attempt ended with this status; its body was not kept (too \
                          large, or broken while being sent). Fetch the result from Location if \
                          one is given.";
            let mut response =
                Problem::ResponseNotStored.response_with_status(self.status, Some(detail));
            if let Some(location) = self.headers.get(header::LOCATION) {
                response
                    .headers_mut()
                    .insert(header::LOCATION, location.clone());
            }
            response
        };
        response
            .headers_mut()
            .insert(IDEMPOTENT_REPLAYED, HeaderValue::from_static("true"));
        response
    }
}

/// The headers worth replaying: drops per-connection and per-moment ones, including any
/// header the response itself lists in `Connection`.
fn replayable(headers: &HeaderMap) -> HeaderMap {
    let listed: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .filter_map(|name| HeaderName::try_from(name.trim()).ok())
        .collect();
    let mut kept = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        if !never_replayed(name) && !listed.contains(name) {
            kept.append(name.clone(), value.clone());
        }
    }
    kept
}
