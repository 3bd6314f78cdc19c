//! The HTTP adapter: one attempt is one POST carrying the operation key in `Idempotency-Key`.

use std::time::SystemTime;

use reqwest::header::{CONTENT_TYPE, HeaderMap, RETRY_AFTER};

use crate::{Answer, Attempt, Failure, Reply, retry_after};

/// The header that carries the operation key.
pub const KEY_HEADER: &str = "Idempotency-Key";
/// The header a service sets on a response delivered from its record.
pub const REPLAYED_HEADER: &str = "Idempotent-Replayed";

/// A successful HTTP response: its status and body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpResponse {
    /// A 2xx status.
    pub status: u16,
    /// The body as received.
    pub body: Vec<u8>,
}

/// Sends attempts over HTTP/1.1 with `reqwest` (no TLS: for loopback and trusted networks).
///
/// Mapping onto [`Failure`]: a failed connect is [`Failure::Refused`] (nothing was sent); a
/// timeout is [`Failure::TimedOut`]; any other transport error, including a body cut short, is
/// [`Failure::Lost`]; a non-2xx status is [`Failure::Status`] with `Retry-After` read (seconds
/// or HTTP date). A 409 that carries `Retry-After` is read as "the first request with this key
/// is still in progress", which the classifier retries. A 2xx with `Idempotent-Replayed: true`
/// is a replay: the real result, delivered again.
#[derive(Clone, Debug)]
pub struct HttpAdapter {
    http: reqwest::Client,
}

impl Default for HttpAdapter {
    fn default() -> Self {
        Self::new()
    }
}

impl HttpAdapter {
    /// An adapter with its own connection pool, ignoring proxy settings (loopback use).
    pub fn new() -> Self {
        let http = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("an HTTP client without TLS or proxy settings builds");
        Self { http }
    }

    /// One attempt: POSTs `body` to `url` with the attempt's key.
    pub async fn post(
        &self,
        attempt: Attempt,
        url: &str,
        content_type: &str,
        body: Vec<u8>,
    ) -> Result<Reply<HttpResponse>, Failure> {
        let response = self
            .http
            .post(url)
            .header(KEY_HEADER, attempt.key.as_str())
            .header(CONTENT_TYPE, content_type)
            .body(body)
            .send()
            .await
            .map_err(transport_failure)?;
        // What the headers say is read before the body consumes the response.
        let status = response.status().as_u16();
        let headers = response.headers();
        let replayed =
            header(headers, REPLAYED_HEADER).is_some_and(|v| v.eq_ignore_ascii_case("true"));
        let retry_after = header(headers, RETRY_AFTER.as_str())
            .and_then(|value| retry_after::parse(value, SystemTime::now()));
        let body = response.bytes().await.map_err(transport_failure)?.to_vec();
        if (200..300).contains(&status) {
            return Ok(Reply {
                value: HttpResponse { status, body },
                replayed,
            });
        }
        Err(Failure::Status(Answer {
            status,
            retry_after,
            in_progress: status == 409 && retry_after.is_some(),
            detail: String::from_utf8_lossy(&body).into_owned(),
        }))
    }
}

fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

fn transport_failure(error: reqwest::Error) -> Failure {
    if error.is_connect() {
        Failure::Refused(error.to_string())
    } else if error.is_timeout() {
        Failure::TimedOut
    } else {
        Failure::Lost(error.to_string())
    }
}
