//! The server host: hyper serving the real `Idempotency-Key` layer in front of the real payments
//! handler, on simulated TCP; and the bank host that keeps charges apart from the server.
//!
//! Around the real code sit two thin recorders, each with one fault: outside the layer, the
//! connection that may cut an answer before it leaves; inside it, the handler run that may fail
//! with a 503 before its effect, and that records when it starts and how it ends.

use std::convert::Infallible;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use rand::RngExt;
use retrykey_history::{HandlerEnd, History, HistoryEvent};
use retrykey_http::payments::{PaymentLedger, Payments, PaymentsService};
use retrykey_http::{
    Body, Entries, EntriesFuture, IdempotencyLayer, Reservation, StoreLimits, StoredResponse,
    body::full,
};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tower::{Layer, Service, ServiceExt};

use crate::plan::{Plan, SimRng, rng};
use crate::stack::{MakeStore, WithEngine};

/// The port the server and the bank listen on.
pub const PORT: u16 = 80;

tokio::task_local! {
    /// The key of the request a handler run serves, for the ledger that records its effect.
    static KEY: String;
}

/// What the server host keeps from one life to the next: only what a restart would not lose.
#[derive(Clone)]
pub(crate) struct Persisting {
    pub history: History,
    pub plan: Arc<Plan>,
    pub seed: u64,
    /// Lives so far; each start adds one.
    pub lives: Arc<AtomicU64>,
    /// The layer's records when they survive a restart; `None` keeps them in the life's memory.
    pub surviving: Option<Arc<dyn Entries>>,
    /// Charges go to the bank host when set; else to a counter in the server's memory.
    pub bank: bool,
    /// The stack's engine, applied to the layer's builder.
    pub engine: WithEngine,
    /// The stack's store, made afresh at each start unless `surviving` holds one.
    pub store: MakeStore,
    /// The current life's sockets.
    pub sockets: Sockets,
    /// The last life that crashed (0: none yet).
    pub crashed: Arc<AtomicU32>,
}

/// One life of the server host: listens, and serves each connection.
pub(crate) async fn serve(keep: Persisting) -> Result<(), Box<dyn std::error::Error>> {
    let life = keep.lives.fetch_add(1, Ordering::SeqCst) as u32 + 1;
    keep.sockets.close_all();
    if life > 1 {
        keep.history
            .record("server", HistoryEvent::Restarted { life });
    }
    let ledger: Arc<dyn PaymentLedger> = if keep.bank {
        Arc::new(BankLedger {
            made: AtomicU64::new(0),
            sockets: keep.sockets.clone(),
        })
    } else {
        Arc::new(CountingLedger {
            history: keep.history.clone(),
            made: AtomicU64::new(0),
        })
    };
    let payments = Payments::with_ledger(Duration::ZERO, ledger);
    let store: Arc<dyn Entries> = match &keep.surviving {
        Some(store) => Arc::clone(store),
        None => (keep.store)(StoreLimits::default()),
    };
    let layer = (keep.engine)(IdempotencyLayer::builder().shared_store(store)).build();
    let draws = Arc::new(Mutex::new(rng(keep.seed, 100 + u64::from(life))));
    let recorder = Recorder {
        payments: payments.service(),
        history: keep.history.clone(),
        plan: Arc::clone(&keep.plan),
        draws: Arc::clone(&draws),
        life,
        crashed: Arc::clone(&keep.crashed),
    };
    let handler = tower::service_fn(move |request| recorder.clone().handle(request));
    let layered = layer.layer(handler);
    let cuts = Cuts {
        host: "server",
        history: keep.history.clone(),
        plan: Arc::clone(&keep.plan),
        draws,
    };
    accept(cuts, &keep.sockets, layered).await
}

/// What decides, and records, which answers a host's connections lose.
#[derive(Clone)]
pub struct Cuts {
    /// The host that serves, as the history names it.
    pub host: &'static str,
    /// Where a cut answer is recorded.
    pub history: History,
    /// The chance of a cut: the plan's `reply_loss`.
    pub plan: Arc<Plan>,
    /// The host's draws.
    pub draws: Arc<Mutex<SimRng>>,
}

/// Serves `service` on this host's [`PORT`] until the host stops: each answer may be cut off
/// after the service gave it, by the plan's `reply_loss`, as the stage 8 server's are. Another
/// stage's scenario serves its own service with it.
pub async fn serve_cutting<S, B>(cuts: Cuts, service: S) -> Result<(), Box<dyn std::error::Error>>
where
    S: Service<Request<Incoming>, Response = Response<B>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    accept(cuts, &Sockets::default(), service).await
}

async fn accept<S, B>(
    cuts: Cuts,
    sockets: &Sockets,
    service: S,
) -> Result<(), Box<dyn std::error::Error>>
where
    S: Service<Request<Incoming>, Response = Response<B>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let listener = turmoil::net::TcpListener::bind(("0.0.0.0", PORT)).await?;
    loop {
        let (stream, peer) = listener.accept().await?;
        let peer = turmoil::reverse_lookup(peer.ip()).unwrap_or_else(|| peer.ip().to_string());
        let cut = Arc::new(AtomicBool::new(false));
        let cutter = Cutter {
            service: service.clone(),
            cut: Arc::clone(&cut),
            peer,
            cuts: cuts.clone(),
        };
        let io = TokioIo::new(sockets.hold(stream, Some(cut)));
        let service = hyper::service::service_fn(move |request| cutter.clone().answer(request));
        // A connection the client closed or the server cut ends here; nothing to report.
        tokio::spawn(hyper::server::conn::http1::Builder::new().serve_connection(io, service));
    }
}

/// The connection side: serves through the service, then may cut the answer off.
#[derive(Clone)]
struct Cutter<S> {
    service: S,
    cut: Arc<AtomicBool>,
    peer: String,
    cuts: Cuts,
}

impl<S, B> Cutter<S>
where
    S: Service<Request<Incoming>, Response = Response<B>, Error = Infallible>,
{
    async fn answer(self, request: Request<Incoming>) -> Result<Response<B>, Infallible> {
        let key = key_of(request.headers());
        let response = self.service.oneshot(request).await?;
        let lose = {
            let mut draws = self
                .cuts
                .draws
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            draws.random_bool(self.cuts.plan.reply_loss)
        };
        if lose {
            self.cut.store(true, Ordering::SeqCst);
            self.cuts.history.record(
                self.cuts.host,
                HistoryEvent::ReplyCut {
                    to: self.peer,
                    key,
                    status: response.status().as_u16(),
                },
            );
        }
        Ok(response)
    }
}

/// Every socket one life of the server opened, in the order it opened them.
///
/// A crash drops the life's tasks in an order tokio does not fix (it follows task ids, which
/// count across the whole process). If each task closed its own socket, the closing messages
/// would leave in that order, draw their latencies in that order, and one seed would not replay
/// exactly. So the sockets outlive their tasks here, and the next life closes them first, in
/// opening order; until then the crashed host sends nothing, as a machine without power.
#[derive(Clone, Default)]
pub(crate) struct Sockets(Arc<Mutex<Vec<Arc<Mutex<turmoil::net::TcpStream>>>>>);

impl Sockets {
    fn hold(&self, stream: turmoil::net::TcpStream, cut: Option<Arc<AtomicBool>>) -> Held {
        let stream = Arc::new(Mutex::new(stream));
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Arc::clone(&stream));
        Held { stream, cut }
    }

    fn close_all(&self) {
        // A Vec drops its items first to last: the opening order.
        drop(std::mem::take(
            &mut *self.0.lock().unwrap_or_else(PoisonError::into_inner),
        ));
    }
}

/// A held socket; with `cut`, its writes fail once its connection's answer is to be lost.
struct Held {
    stream: Arc<Mutex<turmoil::net::TcpStream>>,
    cut: Option<Arc<AtomicBool>>,
}

impl Held {
    fn with<T>(&self, f: impl FnOnce(Pin<&mut turmoil::net::TcpStream>) -> T) -> T {
        let mut stream = self.stream.lock().unwrap_or_else(PoisonError::into_inner);
        f(Pin::new(&mut *stream))
    }
}

impl AsyncRead for Held {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.with(|stream| stream.poll_read(cx, buf))
    }
}

impl AsyncWrite for Held {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self
            .cut
            .as_ref()
            .is_some_and(|cut| cut.load(Ordering::SeqCst))
        {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        self.with(|stream| stream.poll_write(cx, buf))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.with(|stream| stream.poll_flush(cx))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.with(|stream| stream.poll_shutdown(cx))
    }
}

/// The handler side: what a handler run needs to record itself.
#[derive(Clone)]
struct Recorder {
    payments: PaymentsService,
    history: History,
    plan: Arc<Plan>,
    draws: Arc<Mutex<SimRng>>,
    life: u32,
    crashed: Arc<AtomicU32>,
}

impl Recorder {
    /// Records the run, may fail it with a 503 before its effect, else calls payments.
    async fn handle(self, request: Request<Body>) -> Result<Response<Body>, Infallible> {
        let key = key_of(request.headers());
        let (parts, body) = request.into_parts();
        let bytes = whole(body).await;
        let amount = amount_of(&bytes);
        self.history.record(
            "server",
            HistoryEvent::HandlerStarted {
                key: key.clone(),
                amount,
                life: self.life,
            },
        );
        let mut run = FinishedRun {
            history: self.history.clone(),
            key: key.clone(),
            life: self.life,
            crashed: Arc::clone(&self.crashed),
            ended: false,
        };
        let (fail, work) = {
            let mut draws = self.draws.lock().unwrap_or_else(PoisonError::into_inner);
            let fail = draws.random_bool(self.plan.handler_failure);
            let most = self.plan.max_work.as_millis() as u64;
            (fail, Duration::from_millis(draws.random_range(0..=most)))
        };
        tokio::time::sleep(work).await;
        if fail {
            run.end(HandlerEnd::Failed(503));
            return Ok(unavailable());
        }
        let request = Request::from_parts(parts, full(bytes));
        let response = KEY.scope(key, self.payments.oneshot(request)).await?;
        let (parts, body) = response.into_parts();
        let bytes = whole(body).await;
        run.end(HandlerEnd::Answered(
            parts.status.as_u16(),
            String::from_utf8_lossy(&bytes).into_owned(),
        ));
        Ok(Response::from_parts(parts, full(bytes)))
    }
}

/// One handler run's record: its end, or `Abandoned` when its future is dropped first.
struct FinishedRun {
    history: History,
    key: String,
    life: u32,
    crashed: Arc<AtomicU32>,
    ended: bool,
}

impl FinishedRun {
    fn end(&mut self, end: HandlerEnd) {
        self.ended = true;
        self.history.record(
            "server",
            HistoryEvent::HandlerEnded {
                key: self.key.clone(),
                life: self.life,
                end,
            },
        );
    }
}

impl Drop for FinishedRun {
    fn drop(&mut self) {
        // A run its host's crash stopped is the crash's doing, recorded once as `Crashed`
        // (and its tasks drop in no fixed order, which would make the history vary).
        let crashed = self.crashed.load(Ordering::SeqCst) >= self.life;
        if !self.ended && !crashed {
            self.end(HandlerEnd::Abandoned);
        }
    }
}

/// All of `body`, or nothing if it fails part way: the recorders keep what arrived whole.
async fn whole<B: hyper::body::Body>(body: B) -> Bytes {
    body.collect()
        .await
        .map(|collected| collected.to_bytes())
        .unwrap_or_default()
}

fn unavailable() -> Response<Body> {
    let mut response = Response::new(full("{\"type\":\"payments-unavailable\",\"status\":503}\n"));
    *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/problem+json"),
    );
    response
}

fn key_of(headers: &http::HeaderMap) -> String {
    headers
        .get(retrykey_http::IDEMPOTENCY_KEY)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
        .trim_matches('"')
        .to_owned()
}

fn amount_of(body: &[u8]) -> u64 {
    // `{"amount":N}`, as the simulator's clients write it.
    std::str::from_utf8(body)
        .ok()
        .and_then(|text| text.trim().strip_prefix("{\"amount\":"))
        .and_then(|rest| rest.strip_suffix('}'))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

fn current_key() -> String {
    KEY.try_with(Clone::clone).unwrap_or_default()
}

/// Charges kept in the server's own memory: a counter, each charge an effect in the history.
struct CountingLedger {
    history: History,
    made: AtomicU64,
}

impl PaymentLedger for CountingLedger {
    fn charge<'a>(
        &'a self,
        amount: u64,
        _reservation: Option<Reservation>,
        _reply: fn(u64) -> StoredResponse,
    ) -> EntriesFuture<'a, u64> {
        let payment = self.made.fetch_add(1, Ordering::SeqCst) + 1;
        self.history.record(
            "server",
            HistoryEvent::Effect {
                key: current_key(),
                amount,
                payment,
            },
        );
        EntriesFuture::ready(Ok(payment))
    }

    fn charges(&self) -> EntriesFuture<'_, u64> {
        EntriesFuture::ready(Ok(self.made.load(Ordering::SeqCst)))
    }
}

/// Charges made on the bank host, over the simulated network: the effect outlives a restart
/// of the server, as a card processor's charge does.
struct BankLedger {
    /// Charges this life of the server made (the bank's own record is in the history).
    made: AtomicU64,
    sockets: Sockets,
}

impl PaymentLedger for BankLedger {
    fn charge<'a>(
        &'a self,
        amount: u64,
        _reservation: Option<Reservation>,
        _reply: fn(u64) -> StoredResponse,
    ) -> EntriesFuture<'a, u64> {
        let key = current_key();
        EntriesFuture::new(async move {
            let payment = bank_charge(&self.sockets, &key, amount)
                .await
                .map_err(|error| {
                    retrykey_http::Error::StoreUnavailable(format!(
                        "the bank did not answer: {error}"
                    ))
                })?;
            self.made.fetch_add(1, Ordering::SeqCst);
            Ok(payment)
        })
    }

    fn charges(&self) -> EntriesFuture<'_, u64> {
        EntriesFuture::ready(Ok(self.made.load(Ordering::SeqCst)))
    }
}

async fn bank_charge(
    sockets: &Sockets,
    key: &str,
    amount: u64,
) -> Result<u64, Box<dyn std::error::Error + Send + Sync>> {
    let stream = turmoil::net::TcpStream::connect(("bank", PORT)).await?;
    let io = TokioIo::new(sockets.hold(stream, None));
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io).await?;
    let driver = tokio::spawn(connection);
    let request = Request::post("/charge")
        .header("charge-key", key)
        .body(Full::new(Bytes::from(amount.to_string())))?;
    let response = sender.send_request(request).await?;
    let body = response.into_body().collect().await?.to_bytes();
    driver.abort();
    Ok(std::str::from_utf8(&body)?.trim().parse()?)
}

/// The bank host: charges whatever it is asked to, once per request, and records each charge.
pub(crate) async fn bank(history: History) -> Result<(), Box<dyn std::error::Error>> {
    let made = Arc::new(AtomicU64::new(0));
    let listener = turmoil::net::TcpListener::bind(("0.0.0.0", PORT)).await?;
    loop {
        let (stream, _) = listener.accept().await?;
        let made = Arc::clone(&made);
        let history = history.clone();
        let service = hyper::service::service_fn(move |request: Request<Incoming>| {
            let made = Arc::clone(&made);
            let history = history.clone();
            async move {
                let key = request
                    .headers()
                    .get("charge-key")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_owned();
                let body = request.into_body().collect().await?.to_bytes();
                let amount = std::str::from_utf8(&body)
                    .ok()
                    .and_then(|text| text.trim().parse().ok())
                    .unwrap_or(0);
                let payment = made.fetch_add(1, Ordering::SeqCst) + 1;
                history.record(
                    "bank",
                    HistoryEvent::Effect {
                        key,
                        amount,
                        payment,
                    },
                );
                Ok::<_, hyper::Error>(Response::new(Full::new(Bytes::from(payment.to_string()))))
            }
        });
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
