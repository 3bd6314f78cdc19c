//! The rig: the subject under test, the two files, the consumer's server, dispatchers, and what a
//! check reads back.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use retrykey_client::Policy;
use retrykey_converter::{
    ConversionRow, ConvertSteps, ConverterDb, StandardConvert, crash as consumer_crash, service,
};
use retrykey_durable::crash::Hooks as LedgerHooks;
use retrykey_outbox::crash::Hooks as DispatchHooks;
use retrykey_outbox::dispatcher::{
    DeliverySteps, Dispatcher, DispatcherOptions, StandardDelivery, Tally,
};
use retrykey_outbox::sqlite::{AcceptSteps, StandardAccept};
use retrykey_outbox::{DocumentsOptions, EventRow, OutboxStore, SqliteOutbox};
use retrykey_program::Clock;
use retrykey_server::loopback::Server;
use retrykey_testkit::ScratchFile;

/// What the checks run against: the accepting transaction, the consumer's dedup transaction and
/// the dispatcher's delivery. A variant replaces one of the three with its one changed file.
#[derive(Clone, Copy)]
pub struct OutboxUnderTest {
    /// How the document service accepts a job (`retrykey-outbox`'s `sqlite/accept.rs`).
    pub documents: &'static dyn AcceptSteps,
    /// How the consumer converts once (`retrykey-converter`'s `convert.rs`).
    pub consumer: &'static dyn ConvertSteps,
    /// How a dispatcher delivers one event (`retrykey-outbox`'s `deliver.rs`).
    pub dispatcher: &'static dyn DeliverySteps,
}

impl OutboxUnderTest {
    /// The correct crates.
    pub fn correct() -> Self {
        Self {
            documents: &StandardAccept,
            consumer: &StandardConvert,
            dispatcher: &StandardDelivery,
        }
    }

    /// The same, accepting jobs another way.
    pub fn with_documents(self, documents: &'static dyn AcceptSteps) -> Self {
        Self { documents, ..self }
    }

    /// The same, with another dedup transaction in the consumer.
    pub fn with_consumer(self, consumer: &'static dyn ConvertSteps) -> Self {
        Self { consumer, ..self }
    }

    /// The same, delivering another way.
    pub fn with_dispatcher(self, dispatcher: &'static dyn DeliverySteps) -> Self {
        Self { dispatcher, ..self }
    }
}

/// Every claim's lease: longer than a delivery's budget, as the dispatcher requires, and long
/// enough that no pause of a busy machine lets a claim lapse while its delivery runs.
pub(crate) const LEASE: Duration = Duration::from_secs(30);
/// How far ahead the clock of a dispatcher that "comes back later" runs: past every lease and
/// every redelivery wait.
pub(crate) const AHEAD: Duration = Duration::from_secs(120);

/// A document service, a consumer and what the checks need to watch them.
pub(crate) struct OutboxRig {
    subject: OutboxUnderTest,
    documents_file: ScratchFile,
    /// The consumer's database (its conversions and dedup records).
    pub consumer: Arc<ConverterDb>,
    server: Server,
    /// How many deliveries reached the consumer's commit, first ones and redeliveries.
    answered: Arc<AtomicUsize>,
    /// How many of the next deliveries crash the consumer after it converts.
    crashes: Arc<AtomicUsize>,
    _consumer_file: ScratchFile,
}

impl OutboxRig {
    /// A fresh document file, and a consumer on a fresh file behind a loopback server.
    pub(crate) async fn start(subject: &OutboxUnderTest) -> Self {
        let documents_file = ScratchFile::new("outbox-check-documents");
        let consumer_file = ScratchFile::new("outbox-check-consumer");
        let consumer = ConverterDb::open_sqlite_with_steps(consumer_file.path(), subject.consumer)
            .expect("the consumer's database opens");
        let consumer = Arc::new(consumer);
        let answered = Arc::new(AtomicUsize::new(0));
        let crashes = Arc::new(AtomicUsize::new(0));
        let hooks = {
            let (answered, crashes) = (Arc::clone(&answered), Arc::clone(&crashes));
            consumer_crash::Hooks::with(move |_converted| {
                answered.fetch_add(1, Ordering::SeqCst);
                let crash = crashes
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                    .is_ok();
                // The stand-in for a crash between the commit and the answer: the delivery's
                // connection closes, and the dispatcher hears nothing.
                assert!(!crash, "the consumer crashes after converting");
            })
        };
        let router = service::router_with_hooks(Arc::clone(&consumer), hooks);
        let server = Server::start(router)
            .await
            .expect("the consumer's server starts");
        Self {
            subject: *subject,
            documents_file,
            consumer,
            server,
            answered,
            crashes,
            _consumer_file: consumer_file,
        }
    }

    /// A handle on the document file, as one process opens it: reading `clock`, calling `hooks`
    /// at the ledger's crash points.
    pub(crate) fn documents(&self, clock: Clock, hooks: LedgerHooks) -> Arc<SqliteOutbox> {
        let options = DocumentsOptions {
            clock,
            hooks,
            ..DocumentsOptions::default()
        };
        let documents = SqliteOutbox::open_with_steps(
            self.documents_file.path(),
            options,
            self.subject.documents,
        )
        .expect("the document file opens");
        Arc::new(documents)
    }

    /// A dispatcher named `owner` on `documents`, delivering to the consumer.
    pub(crate) fn dispatcher(
        &self,
        documents: &Arc<SqliteOutbox>,
        owner: &str,
        hooks: DispatchHooks,
    ) -> Dispatcher {
        self.dispatcher_to(documents, owner, hooks, &self.server.url())
    }

    /// The same, delivering to `url`.
    pub(crate) fn dispatcher_to(
        &self,
        documents: &Arc<SqliteOutbox>,
        owner: &str,
        hooks: DispatchHooks,
        url: &str,
    ) -> Dispatcher {
        let policy = Policy::builder()
            .budget(Duration::from_secs(10))
            .attempt_timeout(Duration::from_secs(5))
            .base(Duration::from_millis(10))
            .cap(Duration::from_millis(50))
            .build()
            .expect("the checks' delivery policy");
        let options = DispatcherOptions {
            owner: owner.to_owned(),
            lease: LEASE,
            concurrency: 8,
            poll: Duration::from_millis(10),
            policy,
            seed: Some(7),
            ..DispatcherOptions::new(url)
        };
        let store: Arc<dyn OutboxStore> = Arc::clone(documents) as Arc<dyn OutboxStore>;
        Dispatcher::with_steps(store, options, self.subject.dispatcher, hooks)
            .expect("the checks' dispatcher options are valid")
    }

    /// Makes the consumer crash after converting, on its next delivery.
    pub(crate) fn crash_consumer_once(&self) {
        self.crashes.store(1, Ordering::SeqCst);
    }

    /// How many deliveries reached the consumer's commit (a replay included).
    pub(crate) fn answered(&self) -> usize {
        self.answered.load(Ordering::SeqCst)
    }

    /// The consumer's base URL.
    pub(crate) fn url(&self) -> String {
        self.server.url()
    }

    /// Every conversion the consumer stored.
    pub(crate) fn conversions(&self) -> Vec<ConversionRow> {
        self.consumer.list().expect("the consumer's conversions")
    }
}

/// Every event in `documents`, by job.
pub(crate) fn events(documents: &SqliteOutbox) -> Vec<EventRow> {
    documents.events().expect("the outbox's events")
}

/// Runs rounds of `dispatcher` until one claims nothing, at most `rounds`; what they did.
pub(crate) async fn drain(dispatcher: &Dispatcher, rounds: usize) -> Tally {
    let mut total = Tally::default();
    for _ in 0..rounds {
        let round = dispatcher.round().await.expect("a dispatcher round");
        if round.claimed == 0 {
            return total;
        }
        total.claimed += round.claimed;
        total.delivered += round.delivered;
        total.replayed += round.replayed;
        total.postponed += round.postponed;
        total.rejected += round.rejected;
        total.superseded += round.superseded;
        total.failed += round.failed;
    }
    panic!("events were still due after {rounds} rounds: {total:?}");
}

/// A loopback address nothing listens on: a consumer that is down.
pub(crate) fn refused_url() -> String {
    let port = free_port().expect("a free port");
    format!("http://127.0.0.1:{port}")
}

/// A loopback port nothing listened on a moment ago (the probe's listener is closed again).
pub(crate) fn free_port() -> std::io::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

/// Runs one check on its own runtime, bounded so that a hang fails instead of blocking forever.
pub(crate) fn run<Fut: Future<Output = ()>>(check: impl FnOnce() -> Fut) {
    retrykey_testkit::run_check_within(Duration::from_secs(30), check());
}
