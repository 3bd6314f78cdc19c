// Mirrored by labs/body-only-replay, labs/cancel-unsafe, labs/cookie-not-kept, labs/no-fingerprint, labs/panic-jams-the-key, labs/replay-5xx, labs/unscoped-key, labs/url-only-fingerprint: see labs/README.md before changing this file.
//! The request-handling core: key, body, fingerprint, then replay, wait, or run the first attempt.
//!
//! Each step answers as early as it can, and nothing is stored before the handler has run:
//! the layer's own rejections (400, 408, 413, 422) are never remembered.

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::request::Parts;
use http::{Request, Response, StatusCode, header};

use crate::body::{self, Body, Captured, Prefixed, ReadError};
use crate::{
    AttemptEnd, BoxFuture, Config, Engine, EntryId, Fingerprint, IdempotencyKey, InFlight, Lookup,
    Next, Problem, Reservation, Reserve, StoredResponse, Token,
};

/// How many times a request looks again after losing a reservation race before giving up
/// with 409. Each lost race means another request with the key has moved on, so more than a
/// couple of rounds only happens under a storm of failures.
const MAX_ROUNDS: usize = 4;

/// The request-handling core: replay, wait for, or run the first attempt of each keyed request.
#[derive(Debug, Clone, Copy, Default)]
pub struct Replay5xx;

impl Engine for Replay5xx {
    fn handle(
        &self,
        config: Arc<Config>,
        request: Request<Body>,
        next: Next,
    ) -> BoxFuture<Response<Body>> {
        // The checks that need no waiting run here, before any future is built: a request the
        // layer does not cover goes straight to the inner service's own future.
        if !config.covers(request.method()) {
            return next.call(request);
        }
        let (parts, body) = request.into_parts();
        let key = match IdempotencyKey::from_headers(&parts.headers) {
            Ok(Some(key)) => key,
            Ok(None) if config.requires_key(&parts) => {
                return problem_response(Problem::KeyMissing, None);
            }
            Ok(None) => return next.call(Request::from_parts(parts, body)),
            Err(problem) => {
                return problem_response(Problem::KeyInvalid, Some(&problem.to_string()));
            }
        };
        Box::pin(keyed(config, parts, body, key, next))
    }
}

/// One of the layer's own answers, as the future the engine returns.
fn problem_response(problem: Problem, detail: Option<&str>) -> BoxFuture<Response<Body>> {
    Box::pin(std::future::ready(problem.response(detail)))
}

/// A request with a valid key: read the body, fingerprint it, then replay, wait, or run.
///
/// (An `async` block rather than an `async fn`: the block works on what it captured in
/// place, where an `async fn` would keep a second copy of its arguments in its future.)
#[expect(
    clippy::manual_async_fn,
    reason = "an async fn's future holds its arguments twice"
)]
// ANCHOR: keyed
fn keyed(
    config: Arc<Config>,
    parts: Parts,
    body: Body,
    key: IdempotencyKey,
    next: Next,
) -> impl Future<Output = Response<Body>> + Send {
    async move {
        let (mut parts, mut next) = (parts, next);
        let (mut bytes, id, fingerprint) = match identify(&config, &parts, body, key).await {
            Ok(identified) => identified,
            Err(refusal) => return refusal,
        };
        for _ in 0..MAX_ROUNDS {
            let lookup = match config.store().lookup(&id).await {
                Ok(lookup) => lookup,
                Err(error) => return store_unavailable(&id, &error),
            };
            match lookup {
                // The fingerprint is compared before anything else: 422 wins over a replay and
                // over any in-flight answer.
                Lookup::Done {
                    fingerprint: first, ..
                }
                | Lookup::InFlight {
                    fingerprint: first, ..
                } if first != fingerprint => {
                    return Problem::KeyReused.response(None);
                }
                Lookup::Done { response, .. } => return response.replay(),
                // Boxed: the rare path keeps its timer out of every request's future.
                Lookup::InFlight { wait, .. } => {
                    match Box::pin(wait_for_first(&config, wait)).await {
                        Waited::Answered(response) => return response,
                        // Its owner stopped renewing (it died): look again, and take
                        // the key over in this very request.
                        Waited::Lapsed => {}
                    }
                }
                Lookup::Absent => {
                    let claim = claim(Arc::clone(&config), id, fingerprint, (parts, bytes, next));
                    match RunToCompletion(Some(Box::pin(claim))).await {
                        Claimed::Ran(response) => return response,
                        // Another request reserved the key between our lookup and our
                        // reservation: look again, and wait for or replay the winner.
                        Claimed::Taken(request) => (parts, bytes, next) = request,
                    }
                }
            }
        }
        Problem::InProgress.response(None)
    }
}
// ANCHOR_END: keyed

/// Reads the body within the limit, then names the request: its entry (the caller's scope and
/// the key) and the fingerprint that a retry under the key must match.
async fn identify(
    config: &Config,
    parts: &Parts,
    body: Body,
    key: IdempotencyKey,
) -> Result<(Bytes, EntryId, Fingerprint), Response<Body>> {
    let bytes = match body::read_limited(body, config.max_body_bytes()).await {
        Ok(bytes) => bytes,
        Err(ReadError::TooLarge) => return Err(Problem::BodyTooLarge.response(None)),
        Err(ReadError::TimedOut) => return Err(Problem::BodyTimedOut.response(None)),
        Err(ReadError::Broken(_)) => return Err(Problem::BodyUnreadable.response(None)),
    };
    let scope = config.scope(parts);
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let id = EntryId::new(&scope, &key);
    let fingerprint = Fingerprint::of(&parts.method, &parts.uri, &scope, content_type, &bytes);
    Ok((bytes, id, fingerprint))
}

/// Which first-attempt answers are kept and replayed: everything but server failures and the
/// two "not processed, try again" statuses. A 5xx may come before the work was done, so
/// replaying it would pin the client to an error for as long as the record lives.
// NEGATIVE: every answer is kept, 5xx included. A transient failure is stored and replayed,
// so no retry with this key can ever get the payment through.
// ANCHOR: worth_keeping
fn worth_keeping(_status: StatusCode) -> bool {
    true
}
// ANCHOR_END: worth_keeping

/// How a wait for the first attempt ended.
enum Waited {
    /// The answer for this request: the first attempt's, or why there is none.
    Answered(Response<Body>),
    /// The first attempt's owner stopped renewing its lease: the key may be taken over.
    Lapsed,
}

/// A duplicate arrived while the first attempt runs: wait for it (bounded) or refuse.
async fn wait_for_first(config: &Config, wait: crate::Waiter) -> Waited {
    let answer = match config.in_flight() {
        InFlight::Reject => Problem::InProgress.response(None),
        // Dropping this future (the client left) drops the waiter: nothing is left behind.
        InFlight::Wait(deadline) => match tokio::time::timeout(deadline, wait).await {
            Ok(AttemptEnd::Completed(response)) => response.replay(),
            Ok(AttemptEnd::Released) => Problem::FirstAttemptFailed.response(None),
            Ok(AttemptEnd::Lapsed) => return Waited::Lapsed,
            Err(_elapsed) => Problem::WaitTimedOut.response(None),
        },
    };
    Waited::Answered(answer)
}

/// Fail closed: without a working store there is no protection, so no work either.
fn store_unavailable(id: &EntryId, error: &crate::Error) -> Response<Body> {
    tracing::warn!(decision = "store_unavailable", entry = ?id, %error, "request refused");
    Problem::StoreUnavailable.response(None)
}

/// A request that found its key absent, held while the key is claimed.
type Unclaimed = (Parts, Bytes, Next);

/// What claiming an absent key came to.
enum Claimed {
    /// The answer: the first attempt's, or the store's refusal.
    Ran(Response<Body>),
    /// Another request reserved the key first: the request, handed back to look again.
    Taken(Unclaimed),
}

/// Reserves the key and runs the first attempt, as one piece the client cannot cancel.
///
/// When a client disconnects, hyper drops the future serving its request. Were the attempt
/// simply awaited here, it would stop at whatever await point it had reached (perhaps after
/// charging a card) and the key would stay reserved forever. The reservation belongs to the
/// same piece: a client that left while a database store was still reserving would otherwise
/// leave the key reserved with no attempt behind it, and every retry would wait out its lease.
/// [`RunToCompletion`] polls the piece in place while the client waits, and hands it to a task
/// of its own if the client leaves: it runs to the end, its answer is stored, and a retry
/// replays it.
#[expect(
    clippy::manual_async_fn,
    reason = "an async fn's future holds its arguments twice"
)]
fn claim(
    config: Arc<Config>,
    id: EntryId,
    fingerprint: Fingerprint,
    (parts, bytes, next): Unclaimed,
) -> impl Future<Output = Claimed> + Send {
    async move {
        match config.store().reserve(&id, &fingerprint).await {
            Ok(Reserve::Reserved(token)) => {
                let request = Request::from_parts(parts, body::full(bytes));
                // A handler whose effect shares the store's database fences its write with
                // this reservation, read with `Reservation::current()` (stage 6); any other
                // handler ignores it.
                let handler = Reservation { id, token }.scope(next.call(request));
                Claimed::Ran(attempt(config, id, token, handler).await)
            }
            Ok(Reserve::Taken) => Claimed::Taken((parts, bytes, next)),
            Ok(Reserve::Full) => Claimed::Ran(Problem::StoreFull.response(None)),
            Err(error) => Claimed::Ran(store_unavailable(&id, &error)),
        }
    }
}

/// The handler call and the record of its outcome. Every path ends in `complete` or
/// `release`, including a panic inside the handler.
#[expect(
    clippy::manual_async_fn,
    reason = "an async fn's future holds its arguments twice"
)]
fn attempt(
    config: Arc<Config>,
    id: EntryId,
    token: Token,
    handler: impl Future<Output = Response<Body>> + Send,
) -> impl Future<Output = Response<Body>> + Send {
    async move {
        // Pinned where it is, inside the attempt's own box: no second allocation.
        let handler = std::pin::pin!(handler);
        let response = match CatchUnwind(handler).await {
            Ok(response) => response,
            Err(_panic) => {
                let released = config.store().release(&id, token).await;
                logged(released, &id, "could not release a failed attempt");
                return Problem::HandlerFailed.response(None);
            }
        };
        // A handler may say its answer is not the key's (`NotKept`): the key is given back.
        let not_kept = response.extensions().get::<crate::NotKept>().is_some();
        if !worth_keeping(response.status()) || not_kept {
            let released = config.store().release(&id, token).await;
            logged(released, &id, "could not release a failed attempt");
            return response;
        }
        // From here on the handler has answered with a status worth keeping: its effect happened,
        // so every path records an outcome. (If recording fails, the key stays reserved and
        // duplicates time out with 503: releasing it would let a retry repeat the effect.)
        let (parts, body) = response.into_parts();
        let (stored, response) = match body::capture(body, config.max_stored_body_bytes()).await {
            Captured::Whole(bytes) => (
                StoredResponse::whole(&parts, &bytes),
                Response::from_parts(parts, body::full(bytes)),
            ),
            Captured::TooLarge(read, rest) => (
                StoredResponse::summary(&parts),
                Response::from_parts(parts, body::boxed(Prefixed::new(read, rest))),
            ),
            // The body broke after the status was decided: keep the status (and `Location`)
            // like a response too large to keep, and tell this client it failed.
            Captured::Broken(_) => (
                StoredResponse::summary(&parts),
                Problem::HandlerFailed.response(None),
            ),
        };
        let recorded = config.store().complete(&id, token, stored).await;
        logged(recorded, &id, "could not record a finished attempt");
        response
    }
}

/// Logs a failed store write; the request's answer does not change because of it.
fn logged(result: Result<(), crate::Error>, id: &EntryId, what: &str) {
    match result {
        Ok(()) => {}
        // Another attempt took the key over: the fence refused this late write, as it must.
        Err(crate::Error::NotOwner) => {
            tracing::warn!(decision = "fenced", entry = ?id, "{what}: the key was taken over");
        }
        Err(error) => tracing::warn!(decision = "store_unavailable", entry = ?id, %error, "{what}"),
    }
}

// ANCHOR: run_to_completion
/// Polls the attempt where it is; if dropped before the attempt ends, spawns the rest of it.
///
/// Cheaper than spawning every attempt up front (no extra task or cross-thread wake-up on
/// the common path) and just as safe: the attempt is never dropped unfinished while the
/// runtime is alive.
struct RunToCompletion<T: Send + 'static>(Option<BoxFuture<T>>);

impl<T: Send + 'static> Future for RunToCompletion<T> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let attempt = self
            .0
            .as_mut()
            .expect("RunToCompletion polled after it finished");
        let response = std::task::ready!(attempt.as_mut().poll(cx));
        self.0 = None;
        Poll::Ready(response)
    }
}

impl<T: Send + 'static> Drop for RunToCompletion<T> {
    fn drop(&mut self) {
        if let Some(attempt) = self.0.take() {
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => drop(runtime.spawn(attempt)),
                // Only when the runtime itself is shutting down, taking every task with it.
                Err(_) => tracing::error!("attempt abandoned: no runtime to finish it"),
            }
        }
    }
}

/// Polls a future, turning a panic inside it into an `Err` instead of unwinding further.
struct CatchUnwind<F>(F);
// ANCHOR_END: run_to_completion

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = &mut self.0;
        match catch_unwind(AssertUnwindSafe(|| Pin::new(inner).poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}
