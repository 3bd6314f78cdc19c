//! The HTTP adapter: one attempt is one POST carrying the operation key in `Idempotency-Key`.

use std::time::SystemTime;

use reqwest::header::{CONTENT_TYPE, HeaderMap, RETRY_AFTER};
use retrykey::Key;

use crate::adapters::{HttpResponse, KEY_HEADER, KeyHeader, REPLAYED_HEADER};
use crate::{
    Attempt, Client, Error, Failure, Outcome, RetrySteps, Success, TransportError, retry_after,
};

/// Sends attempts over HTTP/1.1 with `reqwest` (no TLS: for loopback and trusted networks).
///
/// Mapping onto [`Failure`]: a failed connect, or a request that could not be built, is
/// [`Failure::Refused`] (nothing was sent); a timeout is [`Failure::TimedOut`]; any other
/// transport error, including a body cut short, is [`Failure::Lost`]; both keep reqwest's error
/// as [`TransportError::Http`]. A non-2xx status is [`Failure::Status`] with `Retry-After` read
/// (seconds or HTTP date). A 409 that carries `Retry-After` is read as "the first request with
/// this key is still in progress", which the classifier retries. A 2xx with
/// `Idempotent-Replayed: true` is a replay: the real result, delivered again.
///
/// The key travels as [`KeyHeader`] writes it: bare when it is a token, else quoted. A key the
/// header cannot carry (one that is not ASCII) is refused by [`HttpAdapter::run_with_key`]
/// before the first attempt, with [`Error::KeyNotSendable`]: no request, no attempt counted.
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

    /// Runs one logical operation under `key`: POSTs `body` to `url` as often as `client`'s
    /// policy allows.
    ///
    /// The key is checked against the header's grammar first. One the header cannot carry is
    /// [`Error::KeyNotSendable`] before the first attempt: no request leaves, no attempt is
    /// counted and no retry quota is spent, so it is never mistaken for the service's refusal
    /// ([`Outcome::Rejected`]).
    pub async fn run_with_key<P: RetrySteps>(
        &self,
        client: &Client<P>,
        key: Key,
        url: &str,
        content_type: &str,
        body: Vec<u8>,
    ) -> Result<Outcome<HttpResponse>, Error> {
        KeyHeader::new(&key)?;
        let outcome = client
            .run_with_key(key, |attempt| {
                self.post(attempt, url, content_type, body.clone())
            })
            .await;
        Ok(outcome)
    }

    /// One attempt: POSTs `body` to `url` with the attempt's key, encoded by [`KeyHeader`].
    ///
    /// A key the header cannot carry is not sent: the attempt fails as [`Failure::Refused`] with
    /// [`TransportError::KeyNotSendable`] (nothing left, so nothing applied). [`HttpAdapter::run_with_key`] refuses such a key
    /// before the first attempt instead; callers that run `post` under their own
    /// [`Client::run_with_key`] check it first with [`KeyHeader::new`].
    pub async fn post(
        &self,
        attempt: Attempt,
        url: &str,
        content_type: &str,
        body: Vec<u8>,
    ) -> Result<Success<HttpResponse>, Failure> {
        let key = KeyHeader::new(&attempt.key).map_err(|error| match error {
            Error::KeyNotSendable { at } => Failure::Refused(TransportError::KeyNotSendable { at }),
            other => Failure::Refused(TransportError::other(other)),
        })?;
        let response = self
            .http
            .post(url)
            .header(KEY_HEADER, key.as_str())
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
        HttpResponse::judge(status, replayed, retry_after, body)
    }
}

fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

fn transport_failure(error: reqwest::Error) -> Failure {
    // A request that could not be built never left, like one whose connection failed.
    if error.is_connect() || error.is_builder() {
        Failure::Refused(error.into())
    } else if error.is_timeout() {
        Failure::TimedOut
    } else {
        Failure::Lost(error.into())
    }
}
