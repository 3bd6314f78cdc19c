//! One connection's clocks: how long a client may take over a request head, a body, and the
//! quiet time between requests, so that a client that stalls cannot hold a connection open.
//!
//! A connection is always in one phase: reading a head, handling a request, replying, or idle.
//! The server's connection task asks [`ConnectionClock::deadline`] when to look again and closes
//! the connection when [`ConnectionClock::expired`] says so; the socket wrapper ([`Watched`]) and the per-request
//! wrappers ([`Timed`], [`ReplyGuard`]) move the phase along. A body's own deadline is enforced
//! by the body ([`Deadline`]), so that the handler sees a typed error (an `io::Error` of kind
//! `TimedOut` holding [`BodyTimedOut`]) and the client gets a 408 rather than a closed socket.
//!
//! # Example
//!
//! ```
//! use std::time::{Duration, Instant};
//! use retrykey_server::timeouts::{ConnectionClock, Timeouts};
//!
//! let timeouts = Timeouts { head: Duration::from_secs(1), ..Timeouts::default() };
//! let clock = ConnectionClock::new(Instant::now());
//! // A fresh connection has one head timeout to send its first request.
//! assert!(!clock.expired(&timeouts, Instant::now()));
//! assert!(clock.expired(&timeouts, Instant::now() + Duration::from_secs(2)));
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, Response};
use http_body::Frame;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
use tokio::time::Sleep;
use tower_service::Service;

use crate::BoxError;

/// How long a client may take at each step of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// From a connection's start, or from the first byte of a later request, to the end of its
    /// head. A client that dribbles a head (a slowloris) is cut off here.
    pub head: Duration,
    /// From the end of a head to the end of its body. A body that has not arrived by then is
    /// answered 408 `body-timed-out`.
    pub body: Duration,
    /// How long a kept-alive connection may wait for its next request, and how long a reply
    /// may make no progress towards a client that does not read it.
    pub idle: Duration,
}

impl Default for Timeouts {
    /// 10 s for a head, 30 s for a body, 60 s idle: ample for a real client on a slow link,
    /// short enough that a thousand stalled heads are gone within 10 s, idle connections
    /// within a minute.
    fn default() -> Self {
        Self {
            head: Duration::from_secs(10),
            body: Duration::from_secs(30),
            idle: Duration::from_secs(60),
        }
    }
}

/// Where a connection is between its requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Reading a request head since this instant (the connection's start, or the first byte).
    Head(Instant),
    /// A request is being handled; the body has its own deadline, the handler none.
    Handling,
    /// A reply is being written; the last byte went out at this instant.
    Replying(Instant),
    /// Between requests since this instant, with no byte of the next one yet.
    Idle(Instant),
}

/// A connection's phase, and the first byte of a next request that arrived while a reply was
/// still going out (pipelined): its head clock starts from that byte, not from the reply's end.
#[derive(Debug, Clone, Copy)]
struct State {
    phase: Phase,
    early: Option<Instant>,
}

/// The phase of one connection, shared by its socket, its requests and its task.
#[derive(Debug)]
pub struct ConnectionClock {
    state: Mutex<State>,
    /// Woken when a phase begins, since its deadline may come sooner than the one waited for.
    changed: Notify,
}

impl ConnectionClock {
    /// A connection accepted at `now`: it has one head timeout to send a request.
    pub fn new(now: Instant) -> Self {
        Self {
            state: Mutex::new(State {
                phase: Phase::Head(now),
                early: None,
            }),
            changed: Notify::new(),
        }
    }

    /// Resolves when a new phase has begun since the last call (at once if one has).
    pub async fn changed(&self) {
        self.changed.notified().await;
    }

    /// When the phase's limit runs out, if it has one (a running handler has none).
    pub fn deadline(&self, timeouts: &Timeouts) -> Option<Instant> {
        match self.state().phase {
            Phase::Head(since) => Some(since + timeouts.head),
            Phase::Handling => None,
            Phase::Replying(since) | Phase::Idle(since) => Some(since + timeouts.idle),
        }
    }

    /// Whether the connection is between requests (waiting for one, or reading its head), so
    /// that closing it now loses no request that had begun.
    pub fn between_requests(&self) -> bool {
        matches!(self.state().phase, Phase::Head(_) | Phase::Idle(_))
    }

    /// Whether the connection has overstayed its phase at `now`.
    pub fn expired(&self, timeouts: &Timeouts, now: Instant) -> bool {
        self.deadline(timeouts)
            .is_some_and(|deadline| deadline <= now)
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // The lock guards a copyable value and nothing panics while holding it.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Bytes arrived. Between requests, the first of a new one starts its head clock; while a
    /// reply goes out, they are a pipelined request's, remembered for when the reply is done.
    /// (Bytes read while a request is handled are its body, or a pipelined head that hyper
    /// keeps unread until the reply is out; such a head gets the idle limit, not the head one.)
    fn read(&self, now: Instant) {
        let mut state = self.state();
        match state.phase {
            Phase::Idle(_) => {
                state.phase = Phase::Head(now);
                self.changed.notify_one();
            }
            Phase::Replying(_) => {
                state.early.get_or_insert(now);
            }
            Phase::Head(_) | Phase::Handling => {}
        }
    }

    /// Bytes went out: a reply that makes progress is not stalled. hyper lets go of a reply's
    /// body once its last bytes are buffered, so a large reply may still be going out when the
    /// connection is already idle: its writes keep the idle clock fresh too.
    fn wrote(&self, now: Instant) {
        let mut state = self.state();
        match state.phase {
            Phase::Replying(_) => state.phase = Phase::Replying(now),
            Phase::Idle(_) => state.phase = Phase::Idle(now),
            Phase::Head(_) | Phase::Handling => {}
        }
    }

    /// A request was handed to the service.
    fn handling(&self) {
        *self.state() = State {
            phase: Phase::Handling,
            early: None,
        };
        self.changed.notify_one();
    }

    /// The service answered; its reply starts going out.
    fn replying(&self, now: Instant) {
        self.state().phase = Phase::Replying(now);
        self.changed.notify_one();
    }

    /// The reply is done (or the request was dropped): idle, or reading a pipelined head.
    fn idle(&self, now: Instant) {
        let mut state = self.state();
        state.phase = match state.early.take() {
            Some(first_byte) => Phase::Head(first_byte),
            None => Phase::Idle(now),
        };
        self.changed.notify_one();
    }
}

/// The socket of one connection, telling its clock about every byte in and out.
#[derive(Debug)]
pub struct Watched<T> {
    io: T,
    clock: Arc<ConnectionClock>,
}

impl<T> Watched<T> {
    /// Wraps `io`, reporting to `clock`.
    pub fn new(io: T, clock: Arc<ConnectionClock>) -> Self {
        Self { io, clock }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Watched<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        ready!(Pin::new(&mut self.io).poll_read(cx, buf))?;
        if buf.filled().len() > before {
            self.clock.read(Instant::now());
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Watched<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let written = ready!(Pin::new(&mut self.io).poll_write(cx, buf))?;
        if written > 0 {
            self.clock.wrote(Instant::now());
        }
        Poll::Ready(Ok(written))
    }

    // Forwarded, so that hyper can hand a head and a body to the socket in one call instead of
    // copying the body into its own buffer first.
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let written = ready!(Pin::new(&mut self.io).poll_write_vectored(cx, bufs))?;
        if written > 0 {
            self.clock.wrote(Instant::now());
        }
        Poll::Ready(Ok(written))
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// A request body with a deadline: past it, the next read fails with an [`std::io::Error`] of
/// kind [`TimedOut`](std::io::ErrorKind::TimedOut) that holds a [`BodyTimedOut`], so that a
/// handler can tell a late body from a broken one by the kind alone, without naming this crate.
pub struct Deadline<B> {
    body: B,
    sleep: Pin<Box<Sleep>>,
}

impl<B> Deadline<B> {
    /// `body`, which must end within `limit` from now.
    pub fn new(body: B, limit: Duration) -> Self {
        Self {
            body,
            sleep: Box::pin(tokio::time::sleep(limit)),
        }
    }
}

impl<B> http_body::Body for Deadline<B>
where
    B: http_body::Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.body).poll_frame(cx) {
            return Poll::Ready(frame.map(|frame| frame.map_err(Into::into)));
        }
        ready!(self.sleep.as_mut().poll(cx));
        let late = std::io::Error::new(std::io::ErrorKind::TimedOut, BodyTimedOut);
        Poll::Ready(Some(Err(Box::new(late))))
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// The request body did not arrive within the body timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the request body did not arrive within the body timeout")]
pub struct BodyTimedOut;

/// A service whose requests move their connection's clock and carry a body deadline.
#[derive(Debug, Clone)]
pub struct Timed<S> {
    inner: S,
    clock: Arc<ConnectionClock>,
    body: Duration,
}

impl<S> Timed<S> {
    /// `inner`, for one connection with `clock`; each body must arrive within `body`.
    pub fn new(inner: S, clock: Arc<ConnectionClock>, body: Duration) -> Self {
        Self { inner, clock, body }
    }
}

impl<S, In, B> Service<Request<In>> for Timed<S>
where
    S: Service<Request<Deadline<In>>, Response = Response<B>>,
    S::Future: Send + 'static,
{
    type Response = Response<ReplyGuard<B>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<In>) -> Self::Future {
        self.clock.handling();
        // Dropped with the future if the client leaves first, or with the reply once sent:
        // either way the connection is idle again.
        let idle_after = Idle(Arc::clone(&self.clock));
        let request = request.map(|body| Deadline::new(body, self.body));
        let reply = self.inner.call(request);
        let clock = Arc::clone(&self.clock);
        Box::pin(async move {
            let response = reply.await?;
            clock.replying(Instant::now());
            Ok(response.map(|body| ReplyGuard {
                body,
                _idle_after: idle_after,
            }))
        })
    }
}

/// Marks the connection idle when dropped.
#[derive(Debug)]
struct Idle(Arc<ConnectionClock>);

impl Drop for Idle {
    fn drop(&mut self) {
        self.0.idle(Instant::now());
    }
}

/// A reply body that marks its connection idle when hyper lets go of it: once its last bytes
/// are buffered for sending (or the reply is dropped).
#[derive(Debug)]
pub struct ReplyGuard<B> {
    body: B,
    _idle_after: Idle,
}

impl<B> http_body::Body for ReplyGuard<B>
where
    B: http_body::Body + Unpin,
{
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Timeouts = Timeouts {
        head: Duration::from_secs(1),
        body: Duration::from_secs(2),
        idle: Duration::from_secs(5),
    };

    // Between requests the idle limit applies; the first byte of the next one starts its head
    // limit afresh, and a running handler has no limit at all.
    #[test]
    fn each_phase_has_its_own_limit() {
        let start = Instant::now();
        let clock = ConnectionClock::new(start);
        assert_eq!(clock.deadline(&LIMITS), Some(start + LIMITS.head));
        clock.handling();
        assert_eq!(clock.deadline(&LIMITS), None);
        clock.idle(start);
        assert_eq!(clock.deadline(&LIMITS), Some(start + LIMITS.idle));
        let byte = start + Duration::from_secs(3);
        clock.read(byte);
        assert_eq!(clock.deadline(&LIMITS), Some(byte + LIMITS.head));
        // More bytes of the same head do not extend it.
        clock.read(byte + Duration::from_millis(900));
        assert_eq!(clock.deadline(&LIMITS), Some(byte + LIMITS.head));
    }

    // A reply that keeps going out is not stalled, before hyper lets go of its body and after;
    // one that stops is, after the idle limit.
    #[test]
    fn a_reply_is_stalled_only_when_nothing_goes_out() {
        let start = Instant::now();
        let clock = ConnectionClock::new(start);
        clock.handling();
        clock.replying(start);
        let later = start + Duration::from_secs(4);
        clock.wrote(later);
        assert!(!clock.expired(&LIMITS, start + LIMITS.idle));
        assert!(clock.expired(&LIMITS, later + LIMITS.idle));
        clock.idle(later);
        let still_sending = later + Duration::from_secs(4);
        clock.wrote(still_sending);
        assert!(!clock.expired(&LIMITS, later + LIMITS.idle));
        assert!(clock.expired(&LIMITS, still_sending + LIMITS.idle));
    }

    // A pipelined request whose first byte came while the previous reply went out gets its
    // head limit from that byte, not the idle limit from the reply's end.
    #[test]
    fn a_pipelined_head_is_timed_from_its_first_byte() {
        let start = Instant::now();
        let clock = ConnectionClock::new(start);
        clock.handling();
        clock.replying(start);
        let byte = start + Duration::from_millis(100);
        clock.read(byte);
        clock.idle(start + Duration::from_millis(300));
        assert_eq!(clock.deadline(&LIMITS), Some(byte + LIMITS.head));
        // The next request starts clean.
        clock.handling();
        clock.replying(start);
        clock.idle(start);
        assert_eq!(clock.deadline(&LIMITS), Some(start + LIMITS.idle));
    }
}
