//! The rig: the subject under test, the shared file, replicas on it, and what a check reads back.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use http::{Method, Uri};
use retrykey_http::payments::{PaymentLedger, Payments};
use retrykey_http::{
    BoxFuture, Entries, EntryId, Error, Fingerprint, IdempotencyKey, IdempotencyLayer, InFlight,
    Reserve, Scope, Token,
};
use retrykey_program::Clock;
use retrykey_replicas::sqlite::Holder;
use retrykey_replicas::{
    FenceSteps, Opened, SqliteEntries, SqlitePayments, StandardFence, StoreChoice, StoreOptions,
};
use retrykey_server::loopback::{LoopbackClient, LoopbackReply, Server};
use retrykey_testkit::ScratchFile;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tower_layer::Layer;

use crate::hold::{CountingStore, Signals, X_HOLD, gated};

/// How a replica opens its store and its payments ledger: `StoreChoice::open_with_steps`.
pub type OpenReplica =
    fn(&StoreChoice, StoreOptions, Arc<dyn FenceSteps>) -> BoxFuture<Result<Opened, Error>>;

/// What the checks run against: how each replica opens its store and ledger, and the SQLite claim
/// and fence those stores run. A variant replaces one of the two with its one changed file.
#[derive(Clone)]
pub struct ReplicasUnderTest {
    /// Opens one replica's store and ledger on the shared file (the replicas crate's `open.rs`).
    pub open: OpenReplica,
    /// The claim and fence each replica's SQLite store runs (`sqlite/claim.rs`,
    /// `sqlite/fence.rs`).
    pub steps: Arc<dyn FenceSteps>,
}

impl ReplicasUnderTest {
    /// The correct crate: its own `open.rs`, claim and fence.
    pub fn correct() -> Self {
        Self {
            open: open_correct,
            steps: Arc::new(StandardFence),
        }
    }

    /// The same, opening replicas another way.
    pub fn with_open(self, open: OpenReplica) -> Self {
        Self { open, ..self }
    }

    /// The same, with another claim or fence.
    pub fn with_steps(self, steps: impl FenceSteps) -> Self {
        Self {
            steps: Arc::new(steps),
            ..self
        }
    }
}

fn open_correct(
    choice: &StoreChoice,
    options: StoreOptions,
    steps: Arc<dyn FenceSteps>,
) -> BoxFuture<Result<Opened, Error>> {
    let choice = choice.clone();
    Box::pin(async move { choice.open_with_steps(options, steps).await })
}

/// Every replica's lease.
pub(crate) const LEASE: Duration = Duration::from_secs(10);
/// How far ahead the clock of a late replica runs: past any lease an earlier replica holds,
/// however often that one renews, so the late one sees it lapsed on every look.
pub(crate) const AHEAD: Duration = Duration::from_secs(60);
/// The longest one step of a check may take before it counts as a hang: a busy machine may
/// take seconds to let 30 requests reach their gates.
const STEP: Duration = Duration::from_secs(10);
/// How long a duplicate waits for another replica's attempt before its layer answers 503:
/// longer than two steps, since a duplicate that finds the key in flight waits from then
/// until the others have reached their gates, the check lets the first attempt go, and it
/// ends.
const WAIT: Duration = Duration::from_secs(30);

/// The path every request goes to, and the body every request carries.
pub(crate) const PATH: &str = "/payments";
pub(crate) const PAY: &str = r#"{"amount":5}"#;

/// Runs one check against a fresh shared file, on its own runtime, bounded so a hang fails
/// instead of blocking forever. The file is deleted afterwards, whether the check passed or not.
pub(crate) fn run<Fut: Future<Output = ()>>(check: impl FnOnce(PathBuf) -> Fut) {
    let file = ScratchFile::new("replicas-check");
    // The runtime, with the replicas on it, ends inside `run_check_within`: they close their
    // connections before the file goes.
    retrykey_testkit::run_check_within(Duration::from_secs(60), check(file.path().to_owned()));
}

/// Awaits `future`, failing the check if the step takes longer than [`STEP`].
pub(crate) async fn within<T>(what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(STEP, future)
        .await
        .unwrap_or_else(|_| panic!("gave up after {STEP:?} waiting for {what}"))
}

/// The entry a key names: every request of the checks is anonymous.
fn entry(key: &str) -> EntryId {
    let key = IdempotencyKey::parse(key.as_bytes()).expect("a valid key");
    EntryId::new(&Scope::Anonymous, &key)
}

/// The fingerprint the layer computes for a check's request.
fn fingerprint() -> Fingerprint {
    Fingerprint::of(
        &Method::POST,
        &Uri::from_static(PATH),
        &Scope::Anonymous,
        Some("application/json"),
        PAY.as_bytes(),
    )
}

/// The replicas of one check, the shared file they open, and a reader of that file that belongs
/// to no replica: the checks' view of the truth.
pub(crate) struct Cluster {
    subject: ReplicasUnderTest,
    path: PathBuf,
    observer: SqliteEntries,
    parked: Arc<watch::Sender<usize>>,
}

impl Cluster {
    pub(crate) fn new(subject: &ReplicasUnderTest, path: PathBuf) -> Self {
        let observer = SqliteEntries::open(&path, options("observer", Clock::system()))
            .expect("the shared file opens");
        Self {
            subject: subject.clone(),
            path,
            observer,
            parked: Arc::new(watch::channel(0).0),
        }
    }

    /// Starts a replica that names itself `owner` and reads `clock`.
    pub(crate) async fn replica(&self, owner: &'static str, clock: Clock) -> Replica {
        let choice = StoreChoice::Sqlite(self.path.clone());
        let opened = (self.subject.open)(
            &choice,
            options(owner, clock),
            Arc::clone(&self.subject.steps),
        )
        .await
        .unwrap_or_else(|error| panic!("{owner} could not open the shared file: {error}"));
        let signals = Signals::new(&self.parked);
        let payments = Payments::with_ledger(Duration::ZERO, opened.ledger);
        let store = CountingStore {
            inner: opened.store,
            signals: Arc::clone(&signals),
        };
        let layer = IdempotencyLayer::builder()
            .shared_store(Arc::new(store))
            .in_flight(InFlight::Wait(WAIT))
            .build();
        let server = Server::start(layer.layer(gated(&signals, payments.service())))
            .await
            .expect("a server on 127.0.0.1");
        Replica {
            owner,
            client: LoopbackClient::new(server.url()),
            payments,
            signals,
            _server: server,
        }
    }

    /// Reserves `key` as a replica named `owner` would on a request's arrival, then kills that
    /// replica: it runs on a runtime of its own, shut down right after the reservation, so its
    /// lease renewals stop and nothing ever finishes or releases the key. Returns its token.
    pub(crate) async fn killed_mid_request(&self, owner: &'static str, key: &str) -> Token {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime for the replica to kill");
        let (open, steps) = (self.subject.open, Arc::clone(&self.subject.steps));
        let choice = StoreChoice::Sqlite(self.path.clone());
        let (id, fingerprint) = (entry(key), fingerprint());
        let reserved = runtime.spawn(async move {
            let opened = open(&choice, options(owner, Clock::system()), steps).await?;
            opened.store.reserve(&id, &fingerprint).await
        });
        let reserved = within("the replica to reserve before it is killed", reserved).await;
        runtime.shutdown_background();
        match reserved {
            Ok(Ok(Reserve::Reserved(token))) => token,
            other => panic!("{owner} could not reserve {key} before it was killed: {other:?}"),
        }
    }

    /// The store a replica named `owner` opens on the shared file, holding at most
    /// `max_entries` keys, for a check that reserves keys without a server in front.
    pub(crate) async fn bounded_store(&self, owner: &str, max_entries: usize) -> Arc<dyn Entries> {
        let choice = StoreChoice::Sqlite(self.path.clone());
        let mut options = options(owner, Clock::system());
        options.limits.max_entries = max_entries;
        let opened = (self.subject.open)(&choice, options, Arc::clone(&self.subject.steps))
            .await
            .unwrap_or_else(|error| panic!("{owner} could not open the shared file: {error}"));
        opened.store
    }

    /// Reserves `key` in `store` as a request's arrival would.
    pub(crate) async fn reserve(store: &dyn Entries, key: &str) -> Reserve {
        within("a reservation", store.reserve(&entry(key), &fingerprint()))
            .await
            .unwrap_or_else(|error| panic!("reserving {key} failed: {error}"))
    }

    /// Payments recorded in the shared file, by every replica.
    pub(crate) async fn charges(&self) -> u64 {
        SqlitePayments::new(&self.observer)
            .charges()
            .await
            .expect("the shared file is readable")
    }

    /// The record of `key` in the shared file: its token, owner and state.
    pub(crate) async fn holder(&self, key: &str) -> Option<Holder> {
        self.observer
            .holder(&entry(key))
            .await
            .expect("the shared file is readable")
    }

    /// Waits until `n` requests, over every replica, are parked at a gate or wait on a key in
    /// flight.
    pub(crate) async fn parked(&self, n: usize) {
        let _ = self.parked.subscribe().wait_for(|&count| count >= n).await;
    }
}

/// A replica's options: the check's lease, its name, its clock.
fn options(owner: &str, clock: Clock) -> StoreOptions {
    StoreOptions {
        owner: owner.to_owned(),
        clock,
        ..StoreOptions::default().with_lease(LEASE)
    }
}

/// One running replica: a server on 127.0.0.1 with the layer and the payments handler.
pub(crate) struct Replica {
    pub(crate) owner: &'static str,
    client: LoopbackClient,
    payments: Arc<Payments>,
    pub(crate) signals: Arc<Signals>,
    _server: Server,
}

/// A request sent in the background: await it with [`Replica::reply`].
pub(crate) type Pending = JoinHandle<Result<LoopbackReply, String>>;

impl Replica {
    /// Sends a payment under `key` in the background; with `hold`, it parks at this replica's
    /// gate once it reaches the handler.
    pub(crate) fn send(&self, key: &'static str, hold: bool) -> Pending {
        let client = self.client.clone();
        tokio::spawn(async move {
            let mut headers = vec![("idempotency-key", key)];
            if hold {
                headers.push((X_HOLD, "1"));
            }
            client
                .post(PATH, &headers, PAY)
                .await
                .map_err(|error| error.to_string())
        })
    }

    /// Sends a payment under `key` and waits for the answer.
    pub(crate) async fn post(&self, key: &'static str) -> LoopbackReply {
        Self::reply(self.send(key, false)).await
    }

    /// The answer to a request sent with [`Replica::send`].
    pub(crate) async fn reply(pending: Pending) -> LoopbackReply {
        within("an answer", pending)
            .await
            .expect("the request task")
            .unwrap_or_else(|error| panic!("the request failed at the transport level: {error}"))
    }

    /// Times this replica's handler ran.
    pub(crate) fn attempts(&self) -> u64 {
        self.payments.attempts()
    }
}
