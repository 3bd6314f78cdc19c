//! The gate in front of each replica's handler, and the store probe that sees duplicates wait.
//!
//! A check never sleeps to let something happen: it parks a first attempt at its replica's gate,
//! waits until the probe has seen every duplicate find the key in flight, and only then opens
//! the gate. Both signals count, so a check can wait for "all 30 requests are parked".

use std::convert::Infallible;
use std::sync::Arc;

use http::{Request, Response};
use retrykey_http::payments::PaymentsService;
use retrykey_http::{
    Body, Entries, EntriesFuture, EntryId, Fingerprint, Lookup, Reserve, StoredResponse, Token,
};
use tokio::sync::{Semaphore, watch};
use tower_service::Service;

/// The request header that parks a request at its replica's gate before the handler runs.
pub(crate) const X_HOLD: &str = "x-hold";

/// What one replica tells a check: requests parked at its gate, lookups that found a key in
/// flight, and the same two summed over every replica of the check.
pub(crate) struct Signals {
    held: watch::Sender<usize>,
    in_flight_seen: watch::Sender<usize>,
    /// Shared by every replica of one check: requests parked at a gate or waiting on a key.
    parked: Arc<watch::Sender<usize>>,
    gate: Semaphore,
}

impl Signals {
    pub(crate) fn new(parked: &Arc<watch::Sender<usize>>) -> Arc<Self> {
        Arc::new(Self {
            held: watch::channel(0).0,
            in_flight_seen: watch::channel(0).0,
            parked: Arc::clone(parked),
            gate: Semaphore::new(0),
        })
    }

    /// Waits until `n` requests have reached this replica's gate. A request there has passed
    /// the layer: its key is reserved, and the handler has not charged yet.
    pub(crate) async fn held(&self, n: usize) {
        let _ = self.held.subscribe().wait_for(|&count| count >= n).await;
    }

    /// Waits until this replica's layer has found a key in flight `n` times (each time, a
    /// duplicate that now waits for another attempt, or is refused).
    pub(crate) async fn in_flight_seen(&self, n: usize) {
        let _ = self
            .in_flight_seen
            .subscribe()
            .wait_for(|&count| count >= n)
            .await;
    }

    /// Lets every parked request through, now and later.
    pub(crate) fn open_gate(&self) {
        self.gate.add_permits(Semaphore::MAX_PERMITS / 2);
    }

    async fn pass(&self, hold: bool) {
        if hold {
            self.held.send_modify(|count| *count += 1);
            self.parked.send_modify(|count| *count += 1);
            let _permit = self.gate.acquire().await;
        }
    }
}

/// The payments service behind a gate: a request carrying [`X_HOLD`] waits there until the
/// check opens it. The gate stands between the layer and the handler, so the request already
/// carries its reservation and the handler has not looked at it.
pub(crate) fn gated(
    signals: &Arc<Signals>,
    payments: PaymentsService,
) -> impl Service<
    Request<Body>,
    Response = Response<Body>,
    Error = Infallible,
    Future = impl Send + 'static,
> + Clone
+ Send
+ 'static {
    let signals = Arc::clone(signals);
    tower::service_fn(move |request: Request<Body>| {
        let signals = Arc::clone(&signals);
        let mut payments = payments.clone();
        // Read before the wait: a request body is not shared across threads.
        let hold = request.headers().contains_key(X_HOLD);
        async move {
            signals.pass(hold).await;
            payments.call(request).await
        }
    })
}

/// A replica's store as its layer sees it, counting the lookups that find a key in flight.
/// Everything else goes straight to the store under test.
pub(crate) struct CountingStore {
    pub(crate) inner: Arc<dyn Entries>,
    pub(crate) signals: Arc<Signals>,
}

impl Entries for CountingStore {
    fn lookup<'a>(&'a self, id: &'a EntryId) -> EntriesFuture<'a, Lookup> {
        EntriesFuture::new(async move {
            let lookup = self.inner.lookup(id).await?;
            if matches!(lookup, Lookup::InFlight { .. }) {
                self.signals.in_flight_seen.send_modify(|count| *count += 1);
                self.signals.parked.send_modify(|count| *count += 1);
            }
            Ok(lookup)
        })
    }

    fn reserve<'a>(&'a self, id: &'a EntryId, fp: &'a Fingerprint) -> EntriesFuture<'a, Reserve> {
        self.inner.reserve(id, fp)
    }

    fn complete<'a>(
        &'a self,
        id: &'a EntryId,
        token: Token,
        response: StoredResponse,
    ) -> EntriesFuture<'a, ()> {
        self.inner.complete(id, token, response)
    }

    fn release<'a>(&'a self, id: &'a EntryId, token: Token) -> EntriesFuture<'a, ()> {
        self.inner.release(id, token)
    }
}
