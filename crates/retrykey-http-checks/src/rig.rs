//! The test rig: the subject under test, a store probe, a server on 127.0.0.1, raw TCP helpers.

use std::convert::Infallible;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use http::{Request, Response};
use retrykey_http::{
    Builder, Entries, EntriesFuture, EntryId, Fingerprint, Lookup, MemoryEntries, Reservation,
    Reserve, StandardEngine, StoreLimits, StoredResponse, Token,
};
use retrykey_server::loopback::{LoopbackClient, Server};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{Barrier, watch};
use tower_layer::Layer;
use tower_service::Service;

use crate::shop::{self, Shop};

/// What the checks run against: the layer's core and its store, either of which a variant
/// replaces with its one changed file.
#[derive(Clone, Copy)]
pub struct LayerUnderTest {
    /// Puts the engine under test into a layer builder.
    pub engine: fn(Builder) -> Builder,
    /// Builds the store under test with the given bounds.
    pub store: fn(StoreLimits) -> Arc<dyn Entries>,
}

impl LayerUnderTest {
    /// The correct crate: its own engine and a [`MemoryEntries`].
    pub fn correct() -> Self {
        Self {
            engine: |builder| builder.engine(StandardEngine),
            store: |limits| Arc::new(MemoryEntries::new(limits)),
        }
    }

    /// The same, with another engine.
    pub fn with_engine(self, engine: fn(Builder) -> Builder) -> Self {
        Self { engine, ..self }
    }

    /// The same, with another store.
    pub fn with_store(self, store: fn(StoreLimits) -> Arc<dyn Entries>) -> Self {
        Self { store, ..self }
    }
}

/// Runs one check on its own runtime, bounded so a hang fails instead of blocking forever.
pub(crate) fn run(check: impl Future<Output = ()>) {
    retrykey_testkit::run_check_within(Duration::from_secs(60), check);
}

/// Awaits `future`, failing the check if it takes more than 20 s (a hang, not a speed limit).
pub(crate) async fn within<T>(what: &str, future: impl Future<Output = T>) -> T {
    within_for(Duration::from_secs(20), what, future).await
}

/// Awaits `future` for at most `deadline`: for a step that a variant never takes, so that its
/// check fails in seconds (still far above what the correct layer needs).
pub(crate) async fn within_for<T>(
    deadline: Duration,
    what: &str,
    future: impl Future<Output = T>,
) -> T {
    tokio::time::timeout(deadline, future)
        .await
        .unwrap_or_else(|_| panic!("gave up waiting: {what}"))
}

/// A store wrapper that observes the store under test and can force a reservation race.
pub(crate) struct Probe {
    inner: Arc<dyn Entries>,
    /// Lookups that found the key in flight (so a duplicate is surely waiting or refused).
    in_flight_seen: watch::Sender<usize>,
    /// Answers the store under test stored.
    completed: watch::Sender<usize>,
    /// When set, the first `n` reservations wait until all `n` have arrived.
    race: Option<(Barrier, AtomicUsize, usize)>,
    /// Every reservation the store granted, in order.
    granted: Mutex<Vec<Reservation>>,
    /// When set, a granted reservation is held back from the layer until the gate opens, as a
    /// database store's answer is still on its way after the claim committed.
    held: Option<watch::Sender<bool>>,
}

impl Probe {
    pub(crate) async fn in_flight_seen(&self, n: usize) {
        let mut seen = self.in_flight_seen.subscribe();
        let _ = seen.wait_for(|&count| count >= n).await;
    }

    /// Waits until the store has stored at least `n` answers.
    pub(crate) async fn completed(&self, n: usize) {
        let mut completed = self.completed.subscribe();
        let _ = completed.wait_for(|&count| count >= n).await;
    }

    /// Lets held reservations through to the layer.
    pub(crate) fn let_reservations_through(&self) {
        if let Some(gate) = &self.held {
            gate.send_replace(true);
        }
    }

    /// Waits until the store has granted at least `n` reservations.
    pub(crate) async fn granted_at_least(&self, n: usize) {
        while self.granted().len() < n {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// The reservations the store granted so far, in order.
    pub(crate) fn granted(&self) -> Vec<Reservation> {
        self.granted
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Entries for Probe {
    fn lookup<'a>(&'a self, id: &'a EntryId) -> EntriesFuture<'a, Lookup> {
        EntriesFuture::new(async move {
            let lookup = self.inner.lookup(id).await?;
            if matches!(lookup, Lookup::InFlight { .. }) {
                self.in_flight_seen.send_modify(|count| *count += 1);
            }
            Ok(lookup)
        })
    }

    fn reserve<'a>(&'a self, id: &'a EntryId, fp: &'a Fingerprint) -> EntriesFuture<'a, Reserve> {
        EntriesFuture::new(async move {
            if let Some((barrier, arrived, racers)) = &self.race
                && arrived.fetch_add(1, Ordering::SeqCst) < *racers
            {
                // Every racer has looked up the key and seen it absent before any of them
                // reserves: the worst interleaving, every time.
                barrier.wait().await;
            }
            let reserve = self.inner.reserve(id, fp).await?;
            if let Reserve::Reserved(token) = reserve {
                let granted = Reservation { id: *id, token };
                self.granted
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(granted);
                if let Some(gate) = &self.held {
                    let _ = gate.subscribe().wait_for(|&open| open).await;
                }
            }
            Ok(reserve)
        })
    }

    fn complete<'a>(
        &'a self,
        id: &'a EntryId,
        token: Token,
        response: StoredResponse,
    ) -> EntriesFuture<'a, ()> {
        EntriesFuture::new(async move {
            self.inner.complete(id, token, response).await?;
            self.completed.send_modify(|count| *count += 1);
            Ok(())
        })
    }

    fn release<'a>(&'a self, id: &'a EntryId, token: Token) -> EntriesFuture<'a, ()> {
        self.inner.release(id, token)
    }
}

/// A store that always fails, to prove the layer fails closed.
pub(crate) struct BrokenEntries;

/// What every [`BrokenEntries`] operation answers.
fn offline<'a, T>() -> EntriesFuture<'a, T> {
    EntriesFuture::ready(Err(retrykey_http::Error::StoreUnavailable(
        "offline".into(),
    )))
}

impl Entries for BrokenEntries {
    fn lookup<'a>(&'a self, _: &'a EntryId) -> EntriesFuture<'a, Lookup> {
        offline()
    }
    fn reserve<'a>(&'a self, _: &'a EntryId, _: &'a Fingerprint) -> EntriesFuture<'a, Reserve> {
        offline()
    }
    fn complete<'a>(
        &'a self,
        _: &'a EntryId,
        _: Token,
        _: StoredResponse,
    ) -> EntriesFuture<'a, ()> {
        offline()
    }
    fn release<'a>(&'a self, _: &'a EntryId, _: Token) -> EntriesFuture<'a, ()> {
        offline()
    }
}

/// How to build one rig.
pub(crate) struct Setup {
    pub(crate) options: fn(Builder) -> Builder,
    pub(crate) limits: StoreLimits,
    pub(crate) racers: usize,
    pub(crate) broken_store: bool,
    /// Hold each granted reservation until [`Probe::let_reservations_through`].
    pub(crate) hold_reservations: bool,
}

impl Default for Setup {
    fn default() -> Self {
        Self {
            options: |builder| builder,
            limits: StoreLimits::default(),
            racers: 0,
            broken_store: false,
            hold_reservations: false,
        }
    }
}

/// A running server: the shop behind the layer under test, behind a drop watcher.
pub(crate) struct Rig {
    pub(crate) shop: Arc<Shop>,
    pub(crate) probe: Arc<Probe>,
    pub(crate) client: LoopbackClient,
    pub(crate) server: Server,
    /// Counts server-side request futures dropped before they finished (client went away).
    pub(crate) abandoned: watch::Receiver<usize>,
}

impl Rig {
    pub(crate) async fn start(subject: &LayerUnderTest, setup: Setup) -> Rig {
        let shop = Shop::new();
        let inner: Arc<dyn Entries> = if setup.broken_store {
            Arc::new(BrokenEntries)
        } else {
            (subject.store)(setup.limits)
        };
        let probe = Arc::new(Probe {
            inner,
            in_flight_seen: watch::channel(0).0,
            completed: watch::channel(0).0,
            race: (setup.racers > 0).then(|| {
                (
                    Barrier::new(setup.racers),
                    AtomicUsize::new(0),
                    setup.racers,
                )
            }),
            granted: Mutex::default(),
            held: setup.hold_reservations.then(|| watch::channel(false).0),
        });
        let builder = (setup.options)((subject.engine)(retrykey_http::IdempotencyLayer::builder()));
        let layer = builder.shared_store(probe.clone()).build();
        let (abandoned_tx, abandoned) = watch::channel(0);
        let service = Watched {
            inner: layer.layer(shop::service(&shop)),
            abandoned: Arc::new(abandoned_tx),
        };
        let server = Server::start(service).await.expect("a server on 127.0.0.1");
        let client = LoopbackClient::new(server.url());
        Rig {
            shop,
            probe,
            client,
            server,
            abandoned,
        }
    }

    /// Opens a fresh connection and writes raw bytes on it, leaving the answer unread.
    pub(crate) async fn open(&self, request: &str) -> TcpStream {
        let mut stream = TcpStream::connect(self.server.addr())
            .await
            .expect("connect");
        stream.write_all(request.as_bytes()).await.expect("write");
        stream
    }

    /// The client of `stream` gives up: closes it, then waits until the server has dropped the
    /// request it was serving there.
    pub(crate) async fn leave(&self, stream: TcpStream) {
        drop(stream);
        let mut abandoned = self.abandoned.clone();
        within(
            "the server to drop the request",
            abandoned.wait_for(|&n| n >= 1),
        )
        .await
        .expect("the server's drop counter");
    }

    /// Sends raw bytes on a fresh connection and returns the status and body of the answer.
    pub(crate) async fn raw(&self, request: &str) -> (u16, String) {
        let mut stream = self.open(request).await;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.expect("read");
        let answer = String::from_utf8_lossy(&answer).into_owned();
        let status = answer
            .split(' ')
            .nth(1)
            .and_then(|code| code.parse().ok())
            .unwrap_or_else(|| panic!("not an HTTP answer: {answer:?}"));
        let body = answer.split("\r\n\r\n").nth(1).unwrap_or("").to_owned();
        (status, body)
    }
}

/// An outer service that notices when the server drops a request's future unfinished.
#[derive(Clone)]
struct Watched<S> {
    inner: S,
    abandoned: Arc<watch::Sender<usize>>,
}

struct Abandoned(Option<Arc<watch::Sender<usize>>>);

impl Abandoned {
    /// The request finished: nothing was abandoned.
    fn finished(mut self) {
        self.0 = None;
    }
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        if let Some(sender) = self.0.take() {
            sender.send_modify(|count| *count += 1);
        }
    }
}

impl<S, B> Service<Request<B>> for Watched<S>
where
    S: Service<Request<B>, Response = Response<retrykey_http::Body>, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = Response<retrykey_http::Body>;
    type Error = Infallible;
    type Future = retrykey_http::BoxFuture<Result<Self::Response, Infallible>>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let future = self.inner.call(request);
        let guard = Abandoned(Some(Arc::clone(&self.abandoned)));
        Box::pin(async move {
            let response = future.await;
            guard.finished();
            response
        })
    }
}
