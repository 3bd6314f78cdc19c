//! The demo payments service: a handler with a visible effect (a charge count) and fault hooks.
//!
//! - `POST /payments` with `{"amount": N}` (N a positive integer) charges once and answers
//!   201 `{"payment": <number>}` with `Location: /payments/<number>`, after `work` of delay.
//! - `GET /payments/count` answers `{"charges": N, "attempts": M}`.
//! - Charges are kept by a [`PaymentLedger`]: [`MemoryPayments`] here, or a table in the same
//!   database as the keys (stage 6), where the charge and the key's response commit together.
//! - `X-Flaky: <token>`: the first request carrying each distinct token fails with 500 before
//!   charging; later ones with the same token succeed.
//! - `X-Delay-Ms: <n>`: n milliseconds of extra work before the flaky check (at most 60 s).
//! - `X-Panic: <token>`: the first request carrying each distinct token panics before charging.
//! - `X-Set-Cookie: <anything>`: the answer sets a cookie (`receipt=<number>`).
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//! use retrykey_http::payments::Payments;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let payments = Payments::new(Duration::from_millis(50));
//! let service = payments.service(); // a tower Service, cheap to clone
//! assert_eq!(payments.charges().await.unwrap(), 0);
//! # let _ = service;
//! # }
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

use crate::body::{Body, BoxError, ReadError, boxed, full, read_limited};
use crate::problem::problem_response;
use crate::{BoxFuture, EntriesFuture, Error, Problem, Reservation, StoredResponse, TYPE_BASE};

/// The header that makes a first attempt fail (once per distinct value).
pub const X_FLAKY: &str = "x-flaky";
/// The header that adds work before the flaky check, in milliseconds.
pub const X_DELAY_MS: &str = "x-delay-ms";
/// The header that makes a first attempt panic (once per distinct value).
pub const X_PANIC: &str = "x-panic";
/// The header that makes a payment's answer set a cookie.
pub const X_SET_COOKIE: &str = "x-set-cookie";

/// How the message of a panic that `X-Panic` asked for begins.
pub const ASKED_PANIC: &str = "the request asked the payments handler to panic";

/// Installs a panic hook that says nothing of the panics `X-Panic` asks for (the layer answers
/// them, and a program's output stays what it shows), and reports every other as before.
pub fn quiet_asked_panics() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = (info.payload().downcast_ref::<String>().map(String::as_str))
            .or_else(|| info.payload().downcast_ref::<&str>().copied());
        if !message.is_some_and(|m| m.starts_with(ASKED_PANIC)) {
            report(info);
        }
    }));
}

/// Where charges are kept.
///
/// [`MemoryPayments`] counts in process memory. A payments ledger in the database that holds the keys
/// charges and stores the key's response in one transaction, fenced by the reservation's token.
pub trait PaymentLedger: Send + Sync + 'static {
    /// Charges `amount` once and returns the payment's number.
    ///
    /// With a `reservation`, `reply(number)` is the answer to keep for its key: a ledger that
    /// shares the store's database commits the charge and that answer together, and charges
    /// nothing (answering [`Error::NotOwner`]) when the token is no longer the key's current one.
    fn charge<'a>(
        &'a self,
        amount: u64,
        reservation: Option<Reservation>,
        reply: fn(u64) -> StoredResponse,
    ) -> EntriesFuture<'a, u64>;

    /// Payments made so far.
    fn charges(&self) -> EntriesFuture<'_, u64>;
}

/// A [`PaymentLedger`] in process memory: a counter.
#[derive(Debug, Default)]
pub struct MemoryPayments(AtomicU64);

impl PaymentLedger for MemoryPayments {
    fn charge<'a>(
        &'a self,
        _amount: u64,
        _reservation: Option<Reservation>,
        _reply: fn(u64) -> StoredResponse,
    ) -> EntriesFuture<'a, u64> {
        // The layer stores the answer after the handler returns: in memory, nothing can crash
        // in between without taking the counter with it.
        EntriesFuture::ready(Ok(self.0.fetch_add(1, Ordering::SeqCst) + 1))
    }

    fn charges(&self) -> EntriesFuture<'_, u64> {
        EntriesFuture::ready(Ok(self.0.load(Ordering::SeqCst)))
    }
}

/// The payments service's state: its ledger, an attempt counter and the flaky tokens already seen.
pub struct Payments {
    ledger: Arc<dyn PaymentLedger>,
    attempts: AtomicU64,
    flaky_seen: Mutex<HashSet<String>>,
    work: Duration,
}

impl std::fmt::Debug for Payments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Payments")
            .field("attempts", &self.attempts)
            .field("work", &self.work)
            .finish_non_exhaustive()
    }
}

impl Payments {
    /// A fresh service state charging into a [`MemoryPayments`]; each charge takes `work`.
    pub fn new(work: Duration) -> Arc<Self> {
        Self::with_ledger(work, Arc::new(MemoryPayments::default()))
    }

    /// A fresh service state charging into `ledger`; each charge takes `work`.
    pub fn with_ledger(work: Duration, ledger: Arc<dyn PaymentLedger>) -> Arc<Self> {
        Arc::new(Self {
            ledger,
            attempts: AtomicU64::new(0),
            flaky_seen: Mutex::default(),
            work,
        })
    }

    /// Payments made (the effect that must happen once per logical payment).
    pub async fn charges(&self) -> Result<u64, Error> {
        self.ledger.charges().await
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
            (&Method::GET, "/payments/count") => match self.charges().await {
                Ok(charges) => json(
                    StatusCode::OK,
                    format!(
                        "{{\"charges\":{charges},\"attempts\":{}}}\n",
                        self.attempts()
                    ),
                ),
                Err(error) => book_unavailable(&error),
            },
            (_, "/payments" | "/payments/count") => problem(
                StatusCode::METHOD_NOT_ALLOWED,
                "method-not-allowed",
                "Method not allowed",
            ),
            _ => problem(StatusCode::NOT_FOUND, "not-found", "No such resource"),
        }
    }

    /// Whether `token` is seen for the first time (the flaky and panic hooks fire once each).
    fn first_time(&self, token: &str) -> bool {
        let mut seen = self
            .flaky_seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        seen.insert(token.to_owned())
    }

    /// The fault hooks a request asks for, in order: the delay, then a panic or a 500 (each
    /// once per token). `Some` is the failure to answer instead of charging.
    async fn asked_faults(&self, headers: &HeaderMap) -> Option<Response<Body>> {
        let delay = header_str(headers, X_DELAY_MS)
            .and_then(|ms| ms.parse::<u64>().ok())
            .map_or(0, |ms| ms.min(60_000));
        if delay > 0 {
            tokio::time::sleep(Duration::from_millis(delay)).await;
        }
        if let Some(token) = header_str(headers, X_PANIC)
            && self.first_time(&format!("panic {token}"))
        {
            panic!("{ASKED_PANIC} ({X_PANIC}: {token})");
        }
        let token = header_str(headers, X_FLAKY)?;
        self.first_time(token).then(|| {
            problem(
                StatusCode::INTERNAL_SERVER_ERROR,
                "database-unavailable",
                "Database unavailable",
            )
        })
    }

    async fn pay(&self, request: Request<Body>) -> Response<Body> {
        self.attempts.fetch_add(1, Ordering::SeqCst);
        let (parts, body) = request.into_parts();
        if let Some(failure) = self.asked_faults(&parts.headers).await {
            return failure;
        }
        let body = match read_limited(body, 64 << 10).await {
            Err(ReadError::TimedOut) => return Problem::BodyTimedOut.response(None),
            read => read.ok(),
        };
        let Some(amount) = body.and_then(|b| amount(&b)) else {
            return problem(
                StatusCode::BAD_REQUEST,
                "invalid-payment",
                "Expected a JSON body {\"amount\": N} with N a positive integer",
            );
        };
        if !self.work.is_zero() {
            tokio::time::sleep(self.work).await;
        }
        let reservation = Reservation::current();
        match self.ledger.charge(amount, reservation, created).await {
            Ok(payment) => {
                tracing::debug!(payment, amount, "charged");
                let mut response = created(payment).response();
                if parts.headers.contains_key(X_SET_COOKIE) {
                    let cookie = format!("receipt={payment}; Path=/; HttpOnly");
                    if let Ok(value) = HeaderValue::from_str(&cookie) {
                        response.headers_mut().insert(header::SET_COOKIE, value);
                    }
                }
                response
            }
            // Another replica took the key over while this attempt was paused: its charge was
            // refused. A 503 tells the client to retry, and the retry gets the new owner's answer.
            Err(Error::NotOwner) => {
                let mut response = problem(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "lease-lost",
                    "This attempt lost its key to another; retry",
                );
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
                response
            }
            Err(error) => book_unavailable(&error),
        }
    }
}

/// Whether a request is a new payment, `POST /payments`: the route a server that requires a key
/// (`payments --require-key`) requires it on.
pub fn is_payment(parts: &http::request::Parts) -> bool {
    parts.method == Method::POST && parts.uri.path() == "/payments"
}

/// The answer to a new payment, as the store keeps it: 201, JSON, `Location`.
pub fn created(payment: u64) -> StoredResponse {
    let content_type = (
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    let location = HeaderValue::try_from(format!("/payments/{payment}"))
        .ok()
        .map(|location| (header::LOCATION, location));
    let headers = std::iter::once(&content_type)
        .chain(&location)
        .map(|(name, value)| (name, value));
    StoredResponse::new(
        StatusCode::CREATED,
        headers,
        format!("{{\"payment\":{payment}}}\n").as_bytes(),
    )
}

/// The book could not be read or written, or its commit's outcome is unknown (the reply to
/// COMMIT was lost): this answer claims neither way. `Retry-After` sends the client back with
/// the same key, and the key's record decides: the stored 201 if the charge committed, a fresh
/// attempt if not.
fn book_unavailable(error: &Error) -> Response<Body> {
    tracing::error!(%error, "payments ledger failed");
    let mut response = problem(
        StatusCode::SERVICE_UNAVAILABLE,
        "ledger-unavailable",
        "The payments ledger is unavailable; retry later",
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
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
