//! One HTTP request, described once and sent on every attempt of an operation.
//!
//! The description is a value, built as reqwest's `RequestBuilder` is (method and URL first, then
//! headers, body and timeout), so that the adapter can send the same request again on each
//! attempt with only the key header its own. As in reqwest, a header that cannot be built is
//! remembered and reported when the request is sent, so the builder chains without `?`.
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//! use retrykey_client::adapters::{HttpRequest, Method};
//!
//! let request = HttpRequest::put("http://127.0.0.1:8080/documents/7")
//!     .bearer_auth("s3cr3t")
//!     .header("x-tenant", "acme")
//!     .content_type("application/json")
//!     .body(r#"{"title":"minutes"}"#)
//!     .timeout(Duration::from_secs(2));
//!
//! assert_eq!(request.method(), &Method::PUT);
//! assert_eq!(request.header_map()["x-tenant"], "acme");
//! // Credentials are marked sensitive: they never appear in the request's Debug output.
//! assert!(!format!("{request:?}").contains("s3cr3t"));
//! assert!(request.check().is_ok());
//!
//! // The key header is the adapter's own, set from the operation key on every attempt.
//! let refused = HttpRequest::post("http://127.0.0.1:8080/").header("idempotency-key", "mine");
//! assert!(refused.check().is_err());
//! ```

use std::fmt::Display;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{
    AUTHORIZATION, CONTENT_TYPE, COOKIE, HeaderMap, HeaderName, HeaderValue, PROXY_AUTHORIZATION,
};

use crate::Error;
use crate::adapters::KEY_HEADER;

pub use reqwest::Method;

/// A request to send under an operation key: method, URL, the caller's headers, a body, and how
/// long one attempt may wait for its answer.
///
/// Cheap to clone: the body is shared, not copied, between attempts.
#[derive(Clone, Debug)]
pub struct HttpRequest {
    method: Method,
    url: String,
    headers: HeaderMap,
    body: Bytes,
    timeout: Option<Duration>,
    /// The first thing found wrong while building, reported when the request is sent.
    problem: Option<Arc<str>>,
}

impl HttpRequest {
    /// A request with `method` to `url`, no headers, an empty body and no per-attempt timeout.
    pub fn new(method: Method, url: impl Into<String>) -> Self {
        Self {
            method,
            url: url.into(),
            headers: HeaderMap::new(),
            body: Bytes::new(),
            timeout: None,
            problem: None,
        }
    }

    /// A `GET` of `url`.
    pub fn get(url: impl Into<String>) -> Self {
        Self::new(Method::GET, url)
    }

    /// A `POST` to `url`.
    pub fn post(url: impl Into<String>) -> Self {
        Self::new(Method::POST, url)
    }

    /// A `PUT` to `url`.
    pub fn put(url: impl Into<String>) -> Self {
        Self::new(Method::PUT, url)
    }

    /// A `PATCH` of `url`.
    pub fn patch(url: impl Into<String>) -> Self {
        Self::new(Method::PATCH, url)
    }

    /// A `DELETE` of `url`.
    pub fn delete(url: impl Into<String>) -> Self {
        Self::new(Method::DELETE, url)
    }

    /// Adds a header sent on every attempt (a repeated name adds a value, as in reqwest).
    ///
    /// `Authorization`, `Proxy-Authorization` and `Cookie` values are marked sensitive, so they
    /// stay out of `Debug` output. `Idempotency-Key` is refused: the adapter sets it from the
    /// operation key, and a second value would make the service see another key.
    pub fn header<K, V>(mut self, name: K, value: V) -> Self
    where
        K: TryInto<HeaderName>,
        K::Error: Display,
        V: TryInto<HeaderValue>,
        V::Error: Display,
    {
        let name = match name.try_into() {
            Ok(name) => name,
            Err(error) => return self.refuse(format!("header name: {error}")),
        };
        let mut value = match value.try_into() {
            Ok(value) => value,
            Err(error) => return self.refuse(format!("value of {name}: {error}")),
        };
        if name.as_str().eq_ignore_ascii_case(KEY_HEADER) {
            return self.refuse(format!("{KEY_HEADER} is set from the operation key"));
        }
        if [AUTHORIZATION, PROXY_AUTHORIZATION, COOKIE].contains(&name) {
            value.set_sensitive(true);
        }
        self.headers.append(name, value);
        self
    }

    /// Adds every header of `headers`, under the same rules as [`HttpRequest::header`].
    pub fn headers(mut self, headers: HeaderMap) -> Self {
        for (name, value) in &headers {
            self = self.header(name, value);
        }
        self
    }

    /// Sends `Authorization: Bearer <token>`, marked sensitive.
    pub fn bearer_auth(self, token: impl Display) -> Self {
        self.header(AUTHORIZATION, format!("Bearer {token}"))
    }

    /// Sets `Content-Type`.
    pub fn content_type(self, content_type: &str) -> Self {
        self.header(CONTENT_TYPE, content_type)
    }

    /// The body sent on every attempt.
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self
    }

    /// How long one attempt waits for the whole answer, from connecting to the body's last byte.
    ///
    /// An attempt that runs out is [`Failure::TimedOut`](crate::Failure::TimedOut): the request
    /// may have taken effect, so the operation retries it under the same key while its policy
    /// and budget allow. The policy's own attempt timeout and the budget left still apply; the
    /// shortest wins.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The method.
    pub fn method(&self) -> &Method {
        &self.method
    }

    /// The URL, as given.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The caller's headers (the key header is added per attempt).
    pub fn header_map(&self) -> &HeaderMap {
        &self.headers
    }

    /// The body.
    pub fn body_bytes(&self) -> &Bytes {
        &self.body
    }

    /// The per-attempt timeout, if one was set.
    pub fn attempt_timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Whether the request can be sent: `Err(`[`Error::InvalidRequest`]`)` for the first header
    /// that could not be built or was refused, or a URL that does not parse.
    pub fn check(&self) -> Result<(), Error> {
        if let Some(problem) = self.problem() {
            return Err(Error::InvalidRequest {
                reason: problem.to_string(),
            });
        }
        Ok(())
    }

    /// What makes the request unsendable, if anything.
    pub(crate) fn problem(&self) -> Option<Arc<str>> {
        if let Some(problem) = &self.problem {
            return Some(Arc::clone(problem));
        }
        reqwest::Url::parse(&self.url)
            .err()
            .map(|error| format!("URL {:?}: {error}", self.url).into())
    }

    fn refuse(mut self, problem: String) -> Self {
        self.problem.get_or_insert_with(|| problem.into());
        self
    }
}
