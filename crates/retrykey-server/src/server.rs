//! Serving a service over HTTP/1.1 so that hostile clients cannot hold it: a head, body and idle
//! timeout on every connection, a cap on connections, and a stop that lets requests finish.
//!
//! - A connection over [`ServerLimits::max_connections`] is answered 503 `too-many-connections`
//!   with `Retry-After` and closed, once its request head has arrived (its body is not read).
//! - A head larger than [`ServerLimits::max_head_bytes`] is answered 431 by hyper and closed.
//! - When `shutdown` resolves, the listener closes, connections between requests close, and
//!   each running request gets until [`ServerLimits::shutdown_deadline`] to send its reply;
//!   connections still open then are cut off, and [`Stopped::cut_off`] counts them.
//! - A handler whose client left runs on beyond its connection (the layer's run-to-completion):
//!   wrap the inner service in [`Running::track`](crate::Running::track) and wait for
//!   [`Running::settle_by`](crate::Running::settle_by) with the
//!   stop's deadline, so that such work gets the same deadline.
//!
//! # Example
//!
//! ```
//! use std::convert::Infallible;
//! use bytes::Bytes;
//! use http::{Request, Response};
//! use http_body_util::Full;
//! use retrykey_server::{RequestBody, ServerLimits, serve};
//! use tokio::net::TcpListener;
//! use tower::service_fn;
//!
//! # #[tokio::main]
//! # async fn main() -> std::io::Result<()> {
//! let service = service_fn(|_request: Request<RequestBody>| async {
//!     Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(b"done"))))
//! });
//! let listener = TcpListener::bind("127.0.0.1:0").await?;
//! let limits = ServerLimits { max_connections: 100, ..ServerLimits::default() };
//! let stopped = serve(listener, service, limits, async {}).await; // stops at once
//! assert_eq!(stopped.cut_off, 0);
//! # Ok(())
//! # }
//! ```

use std::convert::Infallible;
use std::future::Future;
use std::io::{self, ErrorKind};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, Response};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;
use tower_service::Service;

use crate::{PROBLEM_JSON, TYPE_BASE};

use crate::BoxError;
use crate::timeouts::{ConnectionClock, Deadline, Timed, Timeouts, Watched};

/// The body of a request as the served service receives it: hyper's, with the body deadline
/// of [`Timeouts::body`] (past it, a read fails as [`Deadline`] says).
pub type RequestBody = Deadline<hyper::body::Incoming>;

/// The refusal's problem type, under the base every problem answer shares.
const TOO_MANY_CONNECTIONS: &str = "too-many-connections";

/// The bounds a server holds every client to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerLimits {
    /// The head, body and idle timeouts of each connection.
    pub timeouts: Timeouts,
    /// Connections served at once; one more is refused with 503.
    pub max_connections: usize,
    /// The largest request head (request line and headers) read; a larger one gets 431.
    pub max_head_bytes: usize,
    /// After the stop signal, how long running requests may take before they are cut off.
    pub shutdown_deadline: Duration,
}

impl Default for ServerLimits {
    /// The default [`Timeouts`], 1,024 connections, 64 KiB heads, 10 s to stop.
    fn default() -> Self {
        Self {
            timeouts: Timeouts::default(),
            max_connections: 1024,
            max_head_bytes: 64 << 10,
            shutdown_deadline: Duration::from_secs(10),
        }
    }
}

/// How a server ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped {
    /// Connections still open at the shutdown deadline, closed with their requests unfinished.
    pub cut_off: usize,
    /// The shutdown deadline: when the stop began, plus [`ServerLimits::shutdown_deadline`].
    pub deadline: Instant,
}

/// Refusals of connections over the cap being written at once; beyond this a connection over
/// the cap is closed without an answer, so that a flood of them costs no more than this. At
/// the stop, refusals still being written are dropped.
const MAX_REFUSING: usize = 64;

/// How long a refusal may wait for the request head, then take to write its answer, and then
/// to let the client finish sending.
const REFUSAL_TIME: Duration = Duration::from_secs(1);

/// Serves `service` on `listener` within `limits` until `shutdown` resolves, then stops as the
/// module documentation says.
pub async fn serve<S, B>(
    listener: TcpListener,
    service: S,
    limits: ServerLimits,
    shutdown: impl Future<Output = ()>,
) -> Stopped
where
    S: Service<Request<RequestBody>, Response = Response<B>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    B: http_body::Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<BoxError>,
{
    let serving = Arc::new(Semaphore::new(limits.max_connections));
    let (stop, stopping) = watch::channel(false);
    let mut connections = JoinSet::new();
    // Refusals apart, so that they are never waited for nor counted as cut off at the stop.
    let mut refusals = JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Some(stream) = opened(accepted).await else {
                    continue;
                };
                if let Ok(permit) = Arc::clone(&serving).try_acquire_owned() {
                    let (service, stopping) = (service.clone(), stopping.clone());
                    connections.spawn(async move {
                        connection(stream, service, limits, stopping).await;
                        drop(permit);
                    });
                } else if refusals.len() < MAX_REFUSING {
                    refusals.spawn(refuse(stream));
                }
                // Else: the stream drops here, and the client sees its connection closed.
            }
            // Finished tasks are collected as they go, so the sets hold only open ones.
            Some(joined) = connections.join_next(), if !connections.is_empty() => logged(joined),
            Some(joined) = refusals.join_next(), if !refusals.is_empty() => logged(joined),
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    refusals.shutdown().await;
    let _ = stop.send(true);
    finish(connections, Instant::now() + limits.shutdown_deadline).await
}

/// The stream of an accepted connection, ready to serve; `None` when there is none to serve:
/// the client gave up before it was accepted, or accepting failed (out of file descriptors,
/// most likely), in which case it waits a moment rather than spin.
async fn opened(accepted: io::Result<(TcpStream, SocketAddr)>) -> Option<TcpStream> {
    match accepted {
        Ok((stream, _peer)) => {
            let _ = stream.set_nodelay(true);
            Some(stream)
        }
        Err(error)
            if matches!(
                error.kind(),
                ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset
            ) =>
        {
            None
        }
        Err(error) => {
            tracing::warn!(%error, "accept failed");
            tokio::time::sleep(Duration::from_millis(10)).await;
            None
        }
    }
}

/// Lets the connections in hand finish until `deadline`, then cuts off the rest and counts them.
async fn finish(mut connections: JoinSet<()>, deadline: Instant) -> Stopped {
    loop {
        tokio::select! {
            next = connections.join_next() => match next {
                Some(joined) => logged(joined),
                None => return Stopped { cut_off: 0, deadline },
            },
            () = tokio::time::sleep_until(deadline.into()) => break,
        }
    }
    let cut_off = connections.len();
    connections.shutdown().await;
    Stopped { cut_off, deadline }
}

/// A connection task that panicked is logged, not lost.
fn logged(joined: Result<(), tokio::task::JoinError>) {
    if let Err(error) = joined
        && error.is_panic()
    {
        tracing::error!(%error, "a connection task panicked");
    }
}

/// Serves one connection until it ends, overstays its phase, or the server stops.
async fn connection<S, B>(
    stream: TcpStream,
    service: S,
    limits: ServerLimits,
    mut stopping: watch::Receiver<bool>,
) where
    S: Service<Request<RequestBody>, Response = Response<B>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    B: http_body::Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<BoxError>,
{
    let clock = Arc::new(ConnectionClock::new(Instant::now()));
    let io = TokioIo::new(Watched::new(stream, Arc::clone(&clock)));
    let service = Timed::new(service, Arc::clone(&clock), limits.timeouts.body);
    let mut http1 = hyper::server::conn::http1::Builder::new();
    // hyper's own header timeout is turned off: it would also count the quiet time between
    // requests, which the idle timeout governs here.
    http1.header_read_timeout(None);
    // The buffer limit alone lets a head through that arrives whole in one read of a buffer
    // that has grown past it; the header-size limit measures the parsed head itself.
    http1
        .max_buf_size(limits.max_head_bytes.max(8192))
        .max_header_size(limits.max_head_bytes);
    let connection = http1.serve_connection(io, TowerToHyperService::new(service));
    tokio::pin!(connection);
    let mut stop_asked = false;
    loop {
        // A running handler has no deadline of its own; its end begins a phase that has one.
        let wake = clock
            .deadline(&limits.timeouts)
            .unwrap_or_else(|| Instant::now() + limits.timeouts.idle);
        tokio::select! {
            _ = connection.as_mut() => return,
            changed = stopping.changed(), if !stop_asked => {
                stop_asked = true;
                if changed.is_ok() {
                    // Between requests there is nothing to finish: close now. (hyper would keep
                    // a connection that has sent part of its first head until it completes.)
                    if clock.between_requests() {
                        return;
                    }
                    // Finish the request in hand, then close instead of keeping alive.
                    connection.as_mut().graceful_shutdown();
                }
            }
            // A new phase may have a sooner deadline than the one being waited for.
            () = clock.changed() => {}
            () = tokio::time::sleep_until(wake.into()) => {
                if clock.expired(&limits.timeouts, Instant::now()) {
                    return; // dropping the connection closes the socket
                }
            }
        }
    }
}

/// Answers a connection over the cap with 503 and closes it.
async fn refuse(mut stream: TcpStream) {
    let body = format!(
        "{{\"type\":\"{TYPE_BASE}{TOO_MANY_CONNECTIONS}\",\"title\":\"Too many connections; retry \
         later\",\"status\":503}}\n"
    );
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: {PROBLEM_JSON}\r\nretry-after: 1\r\n\
         connection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    // Answer once the request head is in (or after a moment, if it never comes): an answer that
    // arrives before the client has written its request is one an HTTP client cannot match to
    // a request, and reports as a broken connection instead of a 503.
    let mut head = [0_u8; 8192];
    let mut seen = 0;
    let _ = tokio::time::timeout(REFUSAL_TIME, async {
        while let Ok(n @ 1..) = stream.read(&mut head[seen..]).await {
            seen += n;
            if seen == head.len() || head[..seen].windows(4).any(|w| w == b"\r\n\r\n") {
                break;
            }
        }
    })
    .await;
    let written = tokio::time::timeout(REFUSAL_TIME, async {
        stream.write_all(answer.as_bytes()).await?;
        stream.shutdown().await
    })
    .await;
    if !matches!(written, Ok(Ok(()))) {
        return;
    }
    // Closing with the client's body unread would reset the connection, and a reset can
    // overtake the answer: read (and drop) what the client sends until it closes, briefly.
    let mut sink = [0_u8; 4096];
    let _ = tokio::time::timeout(REFUSAL_TIME, async {
        while matches!(stream.read(&mut sink).await, Ok(n) if n > 0) {}
    })
    .await;
}

/// A future that resolves at the first SIGTERM (what a service manager or `kill` sends) or
/// SIGINT (Ctrl-C).
///
/// The handlers are installed when this is called, not when the future is first polled: call
/// it before announcing the server, so that a signal sent as soon as the address is printed
/// already stops it gracefully. From then on these signals never kill the process; a second
/// one during the stop changes nothing, and SIGKILL is the way to stop it at once. Must be
/// called within a Tokio runtime.
pub fn signalled() -> impl Future<Output = ()> + Send + 'static {
    use tokio::signal::unix::{Signal, SignalKind, signal};
    let listen = |kind: SignalKind, name: &str| match signal(kind) {
        Ok(signal) => Some(signal),
        Err(error) => {
            tracing::warn!(%error, "cannot listen for {name}; it will not stop the server");
            None
        }
    };
    let terminate = listen(SignalKind::terminate(), "SIGTERM");
    let interrupt = listen(SignalKind::interrupt(), "SIGINT");
    async fn received(signal: Option<Signal>) {
        match signal {
            Some(mut signal) => {
                signal.recv().await;
            }
            None => std::future::pending().await,
        }
    }
    async move {
        tokio::select! {
            () = received(terminate) => {}
            () = received(interrupt) => {}
        }
    }
}
