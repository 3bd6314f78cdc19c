//! The HTTP adapter: one attempt is one request carrying the operation key in `Idempotency-Key`.
//!
//! # Example
//!
//! ```no_run
//! use std::time::Duration;
//! use retrykey_client::adapters::{HttpAdapter, HttpRequest};
//! use retrykey_client::{Client, Outcome, Policy};
//!
//! # async fn demo() -> Result<(), retrykey_client::Error> {
//! let client = Client::builder(Policy::default()).build();
//! let http = HttpAdapter::new();
//! let request = HttpRequest::patch("http://127.0.0.1:8080/orders/42")
//!     .bearer_auth("token")
//!     .content_type("application/json")
//!     .body(r#"{"status":"shipped"}"#)
//!     .timeout(Duration::from_secs(2));
//!
//! // A new key for a new operation; keep `client.new_key()` and use `run_keyed` to survive a
//! // restart of the caller.
//! match http.run(&client, &request).await? {
//!     Outcome::Succeeded { value, .. } => println!("{}", value.status),
//!     Outcome::Rejected { failure, .. } => println!("refused: {failure}"),
//!     Outcome::Unknown { stop, .. } => println!("unknown ({stop}): retry with the same key"),
//! }
//! # Ok(())
//! # }
//! ```

use std::time::SystemTime;

use reqwest::header::{CONTENT_TYPE, HeaderMap, RETRY_AFTER};

use crate::adapters::{HttpRequest, HttpResponse, KEY_HEADER, KeyHeader, REPLAYED_HEADER};
use crate::{
    Attempt, Client, Error, Failure, Key, Outcome, RetrySteps, Success, TransportError, retry_after,
};

/// Sends attempts over HTTP/1.1 with `reqwest` (no TLS: for loopback and trusted networks).
///
/// Any method, with the caller's headers (credentials included) on every attempt, and a
/// per-attempt timeout: see [`HttpRequest`].
///
/// Mapping onto [`Failure`]: a failed connect, or a request that could not be built, is
/// [`Failure::Refused`] (nothing was sent); an attempt past its timeout is [`Failure::TimedOut`];
/// any other transport error, including a body cut short, is [`Failure::Lost`]; a non-2xx
/// status is [`Failure::Status`] with `Retry-After` read (seconds or HTTP date). Transport
/// errors keep reqwest's error as [`TransportError::Http`]. A 409 that carries `Retry-After` is
/// read as "the first request with this key is still in progress", which the classifier
/// retries. A 2xx with `Idempotent-Replayed: true` is a replay: the real result, delivered again.
///
/// The key travels as [`KeyHeader`] writes it: bare when it is a token, else quoted. A key the
/// header cannot carry (one that is not ASCII), or a request that cannot be sent, is refused by
/// [`HttpAdapter::run`] and [`HttpAdapter::run_keyed`] before the first attempt, with
/// [`Error::KeyNotSendable`] or [`Error::InvalidRequest`]: no request, no attempt counted.
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

    /// An adapter over a reqwest client the caller configured (pool, proxy, default headers).
    pub fn with_client(http: reqwest::Client) -> Self {
        Self { http }
    }

    /// Runs one logical operation under a new key: sends `request` as often as `client`'s policy
    /// allows.
    ///
    /// A request that cannot be sent is [`Error::InvalidRequest`] before the first attempt.
    pub async fn run<P: RetrySteps>(
        &self,
        client: &Client<P>,
        request: &HttpRequest,
    ) -> Result<Outcome<HttpResponse>, Error> {
        request.check()?;
        Ok(client.run(|attempt| self.send(attempt, request)).await)
    }

    /// Runs one logical operation under `key`: sends `request` as often as `client`'s policy
    /// allows.
    ///
    /// The key is checked against the header's grammar first, and the request for what HTTP can
    /// carry. A key the header cannot carry is [`Error::KeyNotSendable`], a request that cannot
    /// be sent [`Error::InvalidRequest`], both before the first attempt: no request leaves, no
    /// attempt is counted and no retry quota is spent, so neither is ever mistaken for the
    /// service's refusal ([`Outcome::Rejected`]).
    pub async fn run_keyed<P: RetrySteps>(
        &self,
        client: &Client<P>,
        key: Key,
        request: &HttpRequest,
    ) -> Result<Outcome<HttpResponse>, Error> {
        KeyHeader::new(&key)?;
        request.check()?;
        Ok(client
            .run_with_key(key, |attempt| self.send(attempt, request))
            .await)
    }

    /// Runs one logical operation under `key`: POSTs `body` to `url` with `content_type`.
    ///
    /// The shorthand for [`HttpAdapter::run_keyed`] with [`HttpRequest::post`], with the same
    /// checks before the first attempt.
    pub async fn run_with_key<P: RetrySteps>(
        &self,
        client: &Client<P>,
        key: Key,
        url: &str,
        content_type: &str,
        body: Vec<u8>,
    ) -> Result<Outcome<HttpResponse>, Error> {
        let request = HttpRequest::post(url)
            .header(CONTENT_TYPE, content_type)
            .body(body);
        self.run_keyed(client, key, &request).await
    }

    /// One attempt: sends `request` with the attempt's key, encoded by [`KeyHeader`], and the
    /// caller's headers, within the request's timeout.
    ///
    /// A key the header cannot carry, or a request that cannot be built, is not sent: the
    /// attempt fails as [`Failure::Refused`] (nothing left, so nothing applied), with
    /// [`TransportError::KeyNotSendable`] or [`TransportError::InvalidRequest`].
    /// [`HttpAdapter::run`] and [`HttpAdapter::run_keyed`] refuse both before the first attempt
    /// instead; callers that run `send` under their own [`Client::run_with_key`] check them first
    /// with [`KeyHeader::new`] and [`HttpRequest::check`].
    pub async fn send(
        &self,
        attempt: Attempt,
        request: &HttpRequest,
    ) -> Result<Success<HttpResponse>, Failure> {
        let key = KeyHeader::new(&attempt.key).map_err(|error| match error {
            Error::KeyNotSendable { at } => Failure::Refused(TransportError::KeyNotSendable { at }),
            other => Failure::Refused(TransportError::other(other)),
        })?;
        if let Some(problem) = request.problem() {
            return Err(Failure::Refused(TransportError::InvalidRequest(problem)));
        }
        let exchange = self.exchange(key, request);
        match request.attempt_timeout() {
            // The whole exchange, body included: an answer that stalls mid-body is no answer.
            Some(limit) => tokio::time::timeout(limit, exchange)
                .await
                .unwrap_or(Err(Failure::TimedOut)),
            None => exchange.await,
        }
    }

    /// One attempt: POSTs `body` to `url` with the attempt's key, encoded by [`KeyHeader`].
    ///
    /// The shorthand for [`HttpAdapter::send`] with [`HttpRequest::post`].
    pub async fn post(
        &self,
        attempt: Attempt,
        url: &str,
        content_type: &str,
        body: Vec<u8>,
    ) -> Result<Success<HttpResponse>, Failure> {
        let request = HttpRequest::post(url)
            .header(CONTENT_TYPE, content_type)
            .body(body);
        self.send(attempt, &request).await
    }

    async fn exchange(
        &self,
        key: KeyHeader,
        request: &HttpRequest,
    ) -> Result<Success<HttpResponse>, Failure> {
        let response = self
            .http
            .request(request.method().clone(), request.url())
            .headers(request.header_map().clone())
            .header(KEY_HEADER, key.as_str())
            .body(request.body_bytes().clone())
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
