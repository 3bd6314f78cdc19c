//! The dispatcher: claims due events, delivers each to the consumer at least once, and settles it
//! in the outbox only after the consumer has answered.
//!
//! A claim has an owner, a lease and a fencing token, as a Stage 5 replica's key does: a
//! dispatcher that dies leaves its claims to lapse, another takes them over with higher tokens,
//! and a dispatcher that wakes up after its lease can no longer settle what it claimed (every
//! settling write names its token). Two dispatchers on one outbox therefore share the work
//! instead of sending each event twice.
//!
//! One delivery is one Stage 2 operation ([`retrykey_client`]): the event id is its key on
//! every attempt, attempts back off with full jitter within one budget, a `Retry-After` is
//! honoured, and the client's retry quota sheds retries while the consumer is down. What the
//! operation could not settle waits in the outbox for a later claim, after a second, longer
//! backoff (the redelivery schedule).
//!
//! # Example
//!
//! ```no_run
//! use std::sync::Arc;
//! use retrykey_outbox::dispatcher::{Dispatcher, DispatcherOptions};
//! use retrykey_outbox::{DocumentsOptions, SqliteDocuments};
//!
//! # #[tokio::main] async fn main() -> Result<(), retrykey_outbox::Error> {
//! let documents = SqliteDocuments::open("documents.sqlite".as_ref(), DocumentsOptions::default())?;
//! let options = DispatcherOptions::new("http://127.0.0.1:8090");
//! let dispatcher = Dispatcher::new(Arc::new(documents), options)?;
//! let round = dispatcher.round().await?; // one claim of due events, each delivered
//! println!("{} delivered", round.delivered);
//! # Ok(()) }
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rand::SeedableRng;
use retrykey::Key;
use retrykey_client::adapters::{HttpAdapter, HttpResponse};
use retrykey_client::{Answer, Client, JitterRng, Outcome, Policy, backoff};
use retrykey_converter::{CONVERSIONS_PATH, Conversion, ConversionRequest};
use tokio::task::JoinSet;

use crate::crash::{Hooks, Point};
use crate::{Claimed, Documents, Error, Event};

/// A boxed future, as the delivery function returns it.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// How a dispatcher works.
#[derive(Debug, Clone)]
pub struct DispatcherOptions {
    /// The consumer's base URL, `http://127.0.0.1:PORT`.
    pub consumer: String,
    /// The name written into the claims it makes (for an operator reading them).
    pub owner: String,
    /// How long a claim is held. It must outlast one delivery's whole budget, so that a live
    /// dispatcher never loses a claim in the middle of delivering it.
    pub lease: Duration,
    /// How many deliveries run at once; also the most events one claim takes.
    pub concurrency: usize,
    /// How long to wait before looking again when nothing was due.
    pub poll: Duration,
    /// One delivery's retries: attempts, backoff, budget, attempt timeout.
    pub policy: Policy,
    /// The wait before an event whose delivery did not settle it may be claimed again: full
    /// jitter under `min(cap, base * 2^(delivery - 1))`.
    pub redelivery: Policy,
    /// How long delivered and failed events are kept before the sweep deletes them.
    pub keep_settled: Duration,
    /// A seed for the jitter, so that a run repeats exactly; random when absent.
    pub seed: Option<u64>,
    /// Print one line per settled delivery on stdout.
    pub log: bool,
}

impl DispatcherOptions {
    /// The defaults, delivering to `consumer`: owner `dispatcher pid <n>`, a 30 s lease, 16
    /// deliveries at once, a 25 ms poll; 3 attempts within 10 s (3 s each) per delivery; then
    /// 1 s doubling up to 60 s between deliveries; settled events kept a day.
    pub fn new(consumer: impl Into<String>) -> Self {
        let policy = Policy::builder()
            .attempt_timeout(Duration::from_secs(3))
            .build()
            .expect("the default delivery policy is valid");
        let redelivery = Policy::builder()
            .base(Duration::from_secs(1))
            .cap(Duration::from_secs(60))
            .build()
            .expect("the default redelivery schedule is valid");
        Self {
            consumer: consumer.into(),
            owner: format!("dispatcher pid {}", std::process::id()),
            lease: Duration::from_secs(30),
            concurrency: 16,
            poll: Duration::from_millis(25),
            policy,
            redelivery,
            keep_settled: Duration::from_secs(24 * 60 * 60),
            seed: None,
            log: false,
        }
    }

    /// Refuses settings that cannot work, naming the one at fault.
    pub fn check(&self) -> Result<(), Error> {
        if self.lease <= self.policy.budget() {
            return Err(Error::Config(format!(
                "the lease ({} ms) must be longer than a delivery's budget ({} ms): a live \
                 dispatcher would lose its claims in the middle of delivering them",
                self.lease.as_millis(),
                self.policy.budget().as_millis()
            )));
        }
        if self.concurrency == 0 {
            return Err(Error::Config("concurrency must be at least 1".to_owned()));
        }
        if self.poll.is_zero() {
            return Err(Error::Config(
                "the poll interval must be above zero".to_owned(),
            ));
        }
        Ok(())
    }
}

/// What one delivery came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// The consumer acknowledged the event and the outbox marked it delivered.
    Delivered {
        /// The consumer's conversion number, from its answer.
        conversion: Option<u64>,
        /// Whether the consumer answered from its record (an earlier delivery converted).
        replayed: bool,
    },
    /// The delivery did not settle it: the event is due again after `wait`.
    Postponed {
        /// Why: the last attempt's failure and why the retries stopped.
        why: String,
        /// How long until it may be claimed again.
        wait: Duration,
    },
    /// The consumer refused it for good; an operator must decide.
    Rejected {
        /// The consumer's answer.
        why: String,
    },
    /// The claim was no longer the event's current one when the outbox was told: another
    /// dispatcher took it over, or an operator settled it. Nothing was written.
    Superseded,
}

/// What the consumer acknowledged: its conversion number (when its answer could be read) and
/// whether it was a replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Acknowledgement {
    /// The consumer's number for the conversion.
    pub conversion: Option<u64>,
    /// Whether the consumer answered from its record.
    pub replayed: bool,
}

/// Everything one delivery needs, shared by a dispatcher's deliveries: the outbox, the
/// consumer's address, the retry client, the redelivery schedule and the crash hooks.
#[derive(Debug)]
pub struct Courier {
    documents: Arc<dyn Documents>,
    url: String,
    lease: Duration,
    client: Client,
    http: HttpAdapter,
    redelivery: Policy,
    rng: Mutex<JitterRng>,
    hooks: Hooks,
}

impl Courier {
    /// Sends `event` to the consumer: one operation under the event's id, retried by the
    /// policy. Every attempt presents the same `Idempotency-Key`.
    pub fn send(&self, event: &Event) -> BoxFuture<'_, Outcome<HttpResponse>> {
        let key = match Key::new(event.id.as_str()) {
            Ok(key) => key,
            Err(error) => {
                let answer = Answer::new(400, format!("the event id is not a key: {error}"));
                return Box::pin(std::future::ready(Outcome::Rejected {
                    answer,
                    attempts: 0,
                }));
            }
        };
        let body = serde_json::to_vec(&ConversionRequest {
            event: event.id.to_string(),
            job: event.job.clone(),
            units: event.units,
        })
        .expect("a conversion request serializes");
        let (http, url) = (self.http.clone(), self.url.clone());
        Box::pin(self.client.run_with_key(key, move |attempt| {
            // Each attempt owns what it sends, so that its future borrows nothing.
            let (http, url, body) = (http.clone(), url.clone(), body.clone());
            async move { http.post(attempt, &url, "application/json", body).await }
        }))
    }

    /// What a successful answer acknowledges. A 2xx is the consumer's acknowledgement even if
    /// its body cannot be read; then the conversion number is not known.
    pub fn acknowledgement(&self, response: &HttpResponse, replayed: bool) -> Acknowledgement {
        let conversion = serde_json::from_slice::<Conversion>(&response.body)
            .ok()
            .map(|answer| answer.conversion);
        Acknowledgement {
            conversion,
            replayed,
        }
    }

    /// Marks `claimed` delivered, as acknowledged; [`Delivery::Superseded`] if the claim is no
    /// longer current.
    pub async fn mark_delivered(
        &self,
        claimed: &Claimed,
        acknowledgement: Acknowledgement,
    ) -> Result<Delivery, Error> {
        let conversion = acknowledgement.conversion;
        let marked = self
            .blocking(claimed, move |documents, claimed| {
                documents.mark_delivered(claimed, conversion)
            })
            .await?;
        Ok(if marked {
            Delivery::Delivered {
                conversion,
                replayed: acknowledgement.replayed,
            }
        } else {
            Delivery::Superseded
        })
    }

    /// Lets the claim go; the event is due again after the redelivery schedule's wait.
    pub async fn postpone(&self, claimed: &Claimed, why: &str) -> Result<Delivery, Error> {
        let wait = {
            let mut rng = self.rng.lock().unwrap_or_else(PoisonError::into_inner);
            backoff::full_jitter(&self.redelivery, claimed.delivery, &mut rng)
        };
        let why = why.to_owned();
        let noted = why.clone();
        let postponed = self
            .blocking(claimed, move |documents, claimed| {
                documents.postpone(claimed, &noted, wait)
            })
            .await?;
        Ok(if postponed {
            Delivery::Postponed { why, wait }
        } else {
            Delivery::Superseded
        })
    }

    /// Settles `claimed` as rejected by the consumer's `answer`.
    pub async fn reject(&self, claimed: &Claimed, answer: &Answer) -> Result<Delivery, Error> {
        let why = answer.to_string();
        let noted = why.clone();
        let rejected = self
            .blocking(claimed, move |documents, claimed| {
                documents.mark_rejected(claimed, &noted)
            })
            .await?;
        Ok(if rejected {
            Delivery::Rejected { why }
        } else {
            Delivery::Superseded
        })
    }

    /// Passes the crash point `point`.
    pub fn at(&self, point: Point) {
        self.hooks.at(point);
    }

    /// Runs one outbox call on a blocking thread.
    async fn blocking<T: Send + 'static>(
        &self,
        claimed: &Claimed,
        call: impl FnOnce(&dyn Documents, &Claimed) -> Result<T, Error> + Send + 'static,
    ) -> Result<T, Error> {
        let documents = Arc::clone(&self.documents);
        let claimed = claimed.clone();
        tokio::task::spawn_blocking(move || call(documents.as_ref(), &claimed))
            .await
            .map_err(|error| Error::Config(format!("an outbox call did not finish: {error}")))?
    }
}

/// The delivery of one claimed event, as a plain function: a lab under `labs/` swaps it.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct Parts {
    /// Delivers one claimed event and settles it in the outbox.
    pub deliver: for<'a> fn(&'a Courier, &'a Claimed) -> BoxFuture<'a, Result<Delivery, Error>>,
}

impl Parts {
    /// The correct delivery: [`crate::deliver::deliver`].
    pub fn standard() -> Self {
        Self {
            deliver: crate::deliver::deliver,
        }
    }
}

/// What one round of a dispatcher came to, or a whole run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Events claimed.
    pub claimed: usize,
    /// Events delivered and marked.
    pub delivered: usize,
    /// Of those, how many the consumer answered from its record.
    pub replayed: usize,
    /// Events left for a later claim.
    pub postponed: usize,
    /// Events the consumer refused for good.
    pub rejected: usize,
    /// Claims that were no longer current when settled.
    pub superseded: usize,
    /// Deliveries that failed to settle anything: the outbox could not be written, or the
    /// delivery's task died. Their claims lapse, and the events are claimed again.
    pub failed: usize,
}

impl Tally {
    fn add(&mut self, result: Result<Result<Delivery, Error>, tokio::task::JoinError>) {
        match result {
            Ok(Ok(Delivery::Delivered { replayed, .. })) => {
                self.delivered += 1;
                self.replayed += usize::from(replayed);
            }
            Ok(Ok(Delivery::Postponed { .. })) => self.postponed += 1,
            Ok(Ok(Delivery::Rejected { .. })) => self.rejected += 1,
            Ok(Ok(Delivery::Superseded)) => self.superseded += 1,
            Ok(Err(error)) => {
                eprintln!("dispatcher: a delivery could not be settled: {error}");
                self.failed += 1;
            }
            Err(_) => self.failed += 1,
        }
    }
}

/// Claims and delivers events from one outbox.
#[derive(Debug)]
pub struct Dispatcher {
    courier: Arc<Courier>,
    options: DispatcherOptions,
    parts: Parts,
}

impl std::fmt::Debug for Parts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Parts")
    }
}

impl Dispatcher {
    /// A dispatcher over `documents`, once `options` pass [`DispatcherOptions::check`].
    pub fn new(documents: Arc<dyn Documents>, options: DispatcherOptions) -> Result<Self, Error> {
        Self::with_parts(documents, options, Parts::standard(), Hooks::none())
    }

    /// The same, with the delivery a lab replaces and hooks at the crash point.
    #[doc(hidden)]
    pub fn with_parts(
        documents: Arc<dyn Documents>,
        options: DispatcherOptions,
        parts: Parts,
        hooks: Hooks,
    ) -> Result<Self, Error> {
        options.check()?;
        let mut client = Client::builder(options.policy);
        let rng = match options.seed {
            Some(seed) => {
                client = client.seed(seed);
                JitterRng::seed_from_u64(seed.wrapping_add(1))
            }
            None => rand::make_rng(),
        };
        let courier = Courier {
            documents,
            url: format!(
                "{}{CONVERSIONS_PATH}",
                options.consumer.trim_end_matches('/')
            ),
            lease: options.lease,
            client: client.build(),
            http: HttpAdapter::new(),
            redelivery: options.redelivery,
            rng: Mutex::new(rng),
            hooks,
        };
        Ok(Self {
            courier: Arc::new(courier),
            options,
            parts,
        })
    }

    /// Claims what is due (at most `concurrency` events), delivers them all at once, and waits
    /// for every delivery to settle.
    pub async fn round(&self) -> Result<Tally, Error> {
        let claimed = self.claim(self.options.concurrency).await?;
        let mut tally = Tally {
            claimed: claimed.len(),
            ..Tally::default()
        };
        let mut deliveries = JoinSet::new();
        for claimed in claimed {
            deliveries.spawn(self.delivery(claimed));
        }
        while let Some(result) = deliveries.join_next().await {
            tally.add(self.logged(result));
        }
        Ok(tally)
    }

    /// Delivers until `shutdown` resolves, keeping up to `concurrency` deliveries in flight;
    /// then claims nothing more and lets the deliveries in flight finish. A database that
    /// fails is tried again at the next poll: the dispatcher outlives a restarted server.
    pub async fn run(&self, shutdown: impl Future<Output = ()>) -> Tally {
        let mut shutdown = std::pin::pin!(shutdown);
        let mut stopping = false;
        let mut in_flight = JoinSet::new();
        let mut tally = Tally::default();
        let mut since_sweep = tokio::time::Instant::now();
        loop {
            let room = self.options.concurrency - in_flight.len();
            let mut claimed_any = false;
            // A claim is a write that commits: take events in batches (once half the room is
            // free), not one claim per finished delivery.
            let batch = self.options.concurrency.div_ceil(2);
            if !stopping && (room >= batch || in_flight.is_empty()) {
                match self.claim(room).await {
                    Ok(claimed) => {
                        claimed_any = !claimed.is_empty();
                        tally.claimed += claimed.len();
                        for claimed in claimed {
                            in_flight.spawn(self.delivery(claimed));
                        }
                    }
                    Err(error) => eprintln!("dispatcher: cannot claim: {error}"),
                }
            }
            if stopping && in_flight.is_empty() {
                return tally;
            }
            if since_sweep.elapsed() >= SWEEP_EVERY {
                since_sweep = tokio::time::Instant::now();
                self.sweep().await;
            }
            if claimed_any && self.options.concurrency - in_flight.len() >= batch {
                continue; // more may be due, and there is room for a batch: look again at once
            }
            tokio::select! {
                Some(result) = in_flight.join_next(), if !in_flight.is_empty() => {
                    tally.add(self.logged(result));
                }
                () = tokio::time::sleep(self.options.poll), if !stopping => {}
                () = &mut shutdown, if !stopping => stopping = true,
            }
        }
    }

    /// This dispatcher's options.
    pub fn options(&self) -> &DispatcherOptions {
        &self.options
    }

    async fn claim(&self, limit: usize) -> Result<Vec<Claimed>, Error> {
        let documents = Arc::clone(&self.courier.documents);
        let owner = self.options.owner.clone();
        let lease = self.courier.lease;
        tokio::task::spawn_blocking(move || documents.claim(&owner, lease, limit))
            .await
            .map_err(|error| Error::Config(format!("the claim did not finish: {error}")))?
    }

    fn delivery(
        &self,
        claimed: Claimed,
    ) -> impl Future<Output = (Claimed, Result<Delivery, Error>)> + use<> {
        let courier = Arc::clone(&self.courier);
        let deliver = self.parts.deliver;
        async move {
            let delivery = deliver(&courier, &claimed).await;
            (claimed, delivery)
        }
    }

    /// Prints what a finished delivery came to, with `log`; hands on its result.
    fn logged(
        &self,
        finished: Result<(Claimed, Result<Delivery, Error>), tokio::task::JoinError>,
    ) -> Result<Result<Delivery, Error>, tokio::task::JoinError> {
        let (claimed, result) = finished?;
        if self.options.log {
            let event = &claimed.event;
            let line = match &result {
                Ok(Delivery::Delivered {
                    conversion,
                    replayed,
                }) => format!(
                    "delivered {} (job {}): conversion {}{}",
                    event.id,
                    event.operation,
                    conversion.map_or("unknown".to_owned(), |n| n.to_string()),
                    if *replayed { ", replayed" } else { "" }
                ),
                Ok(Delivery::Postponed { why, wait }) => format!(
                    "postponed {} (job {}) for {} ms: {why}",
                    event.id,
                    event.operation,
                    wait.as_millis()
                ),
                Ok(Delivery::Rejected { why }) => {
                    format!("rejected {} (job {}): {why}", event.id, event.operation)
                }
                Ok(Delivery::Superseded) => format!(
                    "superseded {} (job {}): its claim was no longer current",
                    event.id, event.operation
                ),
                Err(error) => format!("failed {} (job {}): {error}", event.id, event.operation),
            };
            println!("{line}");
        }
        Ok(result)
    }

    async fn sweep(&self) {
        let documents = Arc::clone(&self.courier.documents);
        let kept = self.options.keep_settled;
        match tokio::task::spawn_blocking(move || documents.sweep(kept)).await {
            Ok(Ok(_)) => {}
            Ok(Err(error)) => eprintln!("dispatcher: cannot sweep settled events: {error}"),
            Err(_) => eprintln!("dispatcher: the sweep did not finish"),
        }
    }
}

/// How often a running dispatcher deletes settled events past `keep_settled`.
const SWEEP_EVERY: Duration = Duration::from_secs(60);
