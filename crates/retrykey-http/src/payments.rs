//! The demo payments service: a handler with a visible effect (a charge count) and fault hooks.
//!
//! - `POST /payments` with `{"amount": N}` (N a positive integer) charges once and answers
//!   201 `{"payment": <number>}` with `Location: /payments/<number>`, after `work` of delay.
//! - `GET /payments/count` answers `{"charges": N, "attempts": M}`.
//! - `X-Flaky: <token>`: the first request carrying each distinct token fails with 500 before
//!   charging; later ones with the same token succeed.
//! - `X-Delay-Ms: <n>`: n milliseconds of extra work before the flaky check (at most 60 s).
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//! use retrykey_http::payments::Payments;
//!
//! let payments = Payments::new(Duration::from_millis(50));
//! let service = payments.service(); // a tower Service, cheap to clone
//! assert_eq!(payments.charges(), 0);
//! # let _ = service;
//! ```

use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use tower_service::Service;

use crate::body::{Body, BoxError, boxed, full, read_limited};
use crate::problem::problem_response;
use crate::{BoxFuture, TYPE_BASE};

/// The header that makes a first attempt fail (once per distinct value).
pub const X_FLAKY: &str = "x-flaky";
/// The header that adds work before the flaky check, in milliseconds.
pub const X_DELAY_MS: &str = "x-delay-ms";

/// The payments "database": two counters and the flaky tokens already seen.
#[derive(Debug)]
pub struct Payments {
    charges: AtomicU64,
    attempts: AtomicU64,
    flaky_seen: Mutex<HashSet<String>>,
    work: Duration,
}

impl Payments {
    /// A fresh service state; each charge takes `work`.
    pub fn new(work: Duration) -> Arc<Self> {
        Arc::new(Self {
            charges: AtomicU64::new(0),
            attempts: AtomicU64::new(0),
            flaky_seen: Mutex::default(),
            work,
        })
    }

    /// Payments made (the effect that must happen once per logical payment).
    pub fn charges(&self) -> u64 {
        self.charges.load(Ordering::SeqCst)
    }

    /// Times the POST handler ran, successful or not.
    pub fn attempts(&self) -> u64 {
        self.attempts.load(Ordering::SeqCst)
    }

    /// The HTTP service over this state.
    pub fn service(self: &Arc<Self>) -> PaymentsService {
        PaymentsService(Arc::clone(self))
    }

    async fn route(self: Arc<Self>, request: Request<Body>) -> Response<Body> {
        match (request.method(), request.uri().path()) {
            (&Method::POST, "/payments") => self.pay(request).await,
            (&Method::GET, "/payments/count") => json(
                StatusCode::OK,
                format!(
                    "{{\"charges\":{},\"attempts\":{}}}\n",
                    self.charges(),
                    self.attempts()
                ),
            ),
            (_, "/payments" | "/payments/count") => problem(
                StatusCode::METHOD_NOT_ALLOWED,
                "method-not-allowed",
                "Method not allowed",
            ),
            _ => problem(StatusCode::NOT_FOUND, "not-found", "No such resource"),
        }
    }

    async fn pay(&self, request: Request<Body>) -> Response<Body> {
        self.attempts.fetch_add(1, Ordering::SeqCst);
        let (parts, body) = request.into_parts();
        let delay = header_str(&parts.headers, X_DELAY_MS)
            .and_then(|ms| ms.parse::<u64>().ok())
            .map_or(0, |ms| ms.min(60_000));
        if delay > 0 {
            tokio::time::sleep(Duration::from_millis(delay)).await;
        }
        if let Some(token) = header_str(&parts.headers, X_FLAKY) {
            let mut seen = self
                .flaky_seen
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if seen.insert(token.to_owned()) {
                return problem(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "database-unavailable",
                    "Database unavailable",
                );
            }
        }
        let Some(amount) = read_limited(body, 64 << 10)
            .await
            .ok()
            .and_then(|b| amount(&b))
        else {
            return problem(
                StatusCode::BAD_REQUEST,
                "invalid-payment",
                "Expected a JSON body {\"amount\": N} with N a positive integer",
            );
        };
        if !self.work.is_zero() {
            tokio::time::sleep(self.work).await;
        }
        let payment = self.charges.fetch_add(1, Ordering::SeqCst) + 1;
        tracing::debug!(payment, amount, "charged");
        let mut response = json(StatusCode::CREATED, format!("{{\"payment\":{payment}}}\n"));
        if let Ok(location) = HeaderValue::try_from(format!("/payments/{payment}")) {
            response.headers_mut().insert(header::LOCATION, location);
        }
        response
    }
}

/// The amount of a payment body, if it is `{"amount": N}` with N a positive integer.
fn amount(body: &[u8]) -> Option<u64> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    value.get("amount")?.as_u64().filter(|&amount| amount > 0)
}

fn header_str<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

fn json(status: StatusCode, body: String) -> Response<Body> {
    let mut response = Response::new(full(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn problem(status: StatusCode, slug: &str, title: &str) -> Response<Body> {
    problem_response(status, &format!("{TYPE_BASE}{slug}"), title, None)
}

/// The payments HTTP service (a tower `Service`; wrap it in the layer, serve it with hyper).
#[derive(Debug, Clone)]
pub struct PaymentsService(Arc<Payments>);

/// Any request body will do: served bare by hyper or behind the layer, the same service.
impl<B> Service<Request<B>> for PaymentsService
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Result<Response<Body>, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let payments = Arc::clone(&self.0);
        let request = request.map(boxed);
        Box::pin(async move { Ok(payments.route(request).await) })
    }
}
