//! The handler behind the layer in every check: it charges, counts, and obeys fault headers.
//!
//! - `x-gate: 1` — wait until the check opens the gate (before anything else happens);
//! - `x-flaky: <t>` — the first request with token `t` answers 500 without charging;
//! - `x-panic: <t>` — the first request with token `t` panics without charging;
//! - `x-big: <n>` — answer with an `n`-byte body instead of `{"charge":N}`;
//! - `x-break: 1` — charge and answer 201, but let the body fail after its first chunk.

use std::collections::HashSet;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::Frame;

use http::{HeaderMap, Method, Request, Response, StatusCode, header};
use retrykey_http::body::{full, read_limited};
use retrykey_http::{Body, Reservation};
use tokio::sync::{Semaphore, watch};

/// The effect counters and the fault switches.
#[derive(Debug)]
pub struct Shop {
    charges: AtomicU64,
    attempts: AtomicU64,
    started: watch::Sender<u64>,
    cancelled: watch::Sender<u64>,
    gate: Semaphore,
    tokens_seen: Mutex<HashSet<String>>,
    reservations: Mutex<Vec<Option<Reservation>>>,
}

impl Shop {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            charges: AtomicU64::new(0),
            attempts: AtomicU64::new(0),
            started: watch::channel(0).0,
            cancelled: watch::channel(0).0,
            gate: Semaphore::new(0),
            tokens_seen: Mutex::default(),
            reservations: Mutex::default(),
        })
    }

    /// Charges made: the effect every check counts.
    pub fn charges(&self) -> u64 {
        self.charges.load(Ordering::SeqCst)
    }

    /// Times the handler was entered.
    pub fn attempts(&self) -> u64 {
        self.attempts.load(Ordering::SeqCst)
    }

    /// The reservation each charge ran under, in the order they were made.
    pub fn reservations(&self) -> Vec<Option<Reservation>> {
        self.reservations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Waits until the handler has been entered at least `n` times.
    pub async fn started(&self, n: u64) {
        let mut started = self.started.subscribe();
        let _ = started.wait_for(|&count| count >= n).await;
    }

    /// Waits until the handler has been dropped before its end at least `n` times (its
    /// request's future went away with a client that left).
    pub async fn cancelled(&self, n: u64) {
        let mut cancelled = self.cancelled.subscribe();
        let _ = cancelled.wait_for(|&count| count >= n).await;
    }

    /// Lets every gated request through, now and later.
    pub fn open_gate(&self) {
        self.gate.add_permits(Semaphore::MAX_PERMITS / 2);
    }

    /// True the first time `token` is seen under `header`.
    fn first_time(&self, header: &str, token: &str) -> bool {
        self.tokens_seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(format!("{header}:{token}"))
    }

    pub async fn handle(self: Arc<Self>, request: Request<Body>) -> Response<Body> {
        let unfinished = Unfinished(Some(Arc::clone(&self)));
        let response = self.respond(request).await;
        unfinished.finished();
        response
    }

    async fn respond(&self, request: Request<Body>) -> Response<Body> {
        self.attempts.fetch_add(1, Ordering::SeqCst);
        self.started.send_modify(|count| *count += 1);
        let (parts, body) = request.into_parts();
        if parts.method == Method::GET {
            return reply(StatusCode::OK, "looked".into());
        }
        if parts.headers.contains_key("x-gate") {
            let _permit = self.gate.acquire().await;
        }
        if let Some(token) = text(&parts.headers, "x-flaky")
            && self.first_time("x-flaky", token)
        {
            return reply(StatusCode::INTERNAL_SERVER_ERROR, "flaky".into());
        }
        if let Some(token) = text(&parts.headers, "x-panic")
            && self.first_time("x-panic", token)
        {
            panic!("the handler panics on purpose (x-panic)");
        }
        if read_limited(body, 4 << 20).await.is_err() {
            return reply(StatusCode::BAD_REQUEST, "unreadable".into());
        }
        // Read where a fenced write would read it: at the charge, perhaps after the client left.
        self.reservations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Reservation::current());
        let charge = self.charges.fetch_add(1, Ordering::SeqCst) + 1;
        let body = match text(&parts.headers, "x-big").and_then(|n| n.parse().ok()) {
            Some(size) => "x".repeat(size),
            None => format!("{{\"charge\":{charge}}}"),
        };
        let mut response = if parts.headers.contains_key("x-break") {
            let mut response = Response::new(retrykey_http::body::boxed(BreaksMidway(Some(
                Bytes::from(body),
            ))));
            *response.status_mut() = StatusCode::CREATED;
            response
        } else {
            reply(StatusCode::CREATED, body)
        };
        let headers = response.headers_mut();
        headers.insert(
            header::LOCATION,
            format!("/charges/{charge}").parse().unwrap(),
        );
        headers.insert(
            header::SET_COOKIE,
            format!("seen={charge}").parse().unwrap(),
        );
        response
    }
}

/// Counts the handler as cancelled if it is dropped before [`Unfinished::finished`].
struct Unfinished(Option<Arc<Shop>>);

impl Unfinished {
    fn finished(mut self) {
        self.0 = None;
    }
}

impl Drop for Unfinished {
    fn drop(&mut self) {
        if let Some(shop) = self.0.take() {
            shop.cancelled.send_modify(|count| *count += 1);
        }
    }
}

/// A body that yields one chunk and then fails, as a stream cut by a crashed upstream does.
struct BreaksMidway(Option<Bytes>);

impl http_body::Body for BreaksMidway {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        Poll::Ready(Some(match self.0.take() {
            Some(chunk) => Ok(Frame::data(chunk)),
            None => Err(std::io::Error::other("the body broke mid-stream")),
        }))
    }
}

fn text<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

fn reply(status: StatusCode, body: String) -> Response<Body> {
    let mut response = Response::new(full(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, "application/json".parse().unwrap());
    response
}

/// The shop as a tower service.
pub fn service(
    shop: &Arc<Shop>,
) -> impl tower_service::Service<
    Request<Body>,
    Response = Response<Body>,
    Error = Infallible,
    Future = impl Send + 'static,
> + Clone
+ Send
+ 'static {
    let shop = Arc::clone(shop);
    tower::service_fn(move |request| {
        let shop = Arc::clone(&shop);
        async move { Ok::<_, Infallible>(shop.handle(request).await) }
    })
}
