//! The dispatcher: claims due events, delivers each to the consumer at least once, and settles it
//! in the outbox only after the consumer has answered.
//!
//! A claim has an owner, a lease and a fencing token, as a Stage 6 replica's key does: a
//! dispatcher that dies leaves its claims to lapse, another takes them over with higher tokens,
//! and a dispatcher that wakes up after its lease can no longer settle what it claimed (every
//! settling write names its token). Two dispatchers on one outbox therefore share the work
//! instead of sending each event twice.
//!
//! One delivery is one Stage 3 operation ([`retrykey_client`]): the event id is its key on
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
//! use retrykey_outbox::{DocumentsOptions, SqliteOutbox};
//!
//! # #[tokio::main] async fn main() -> Result<(), retrykey_outbox::Error> {
//! let outbox = SqliteOutbox::open("documents.sqlite".as_ref(), DocumentsOptions::default())?;
//! let options = DispatcherOptions::new("http://127.0.0.1:8090");
//! let dispatcher = Dispatcher::new(Arc::new(outbox), options)?;
//! let round = dispatcher.round().await?; // one claim of due events, each delivered
//! println!("{} delivered", round.delivered);
//! # Ok(()) }
//! ```

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use retrykey_client::Policy;
use tokio::task::JoinSet;

use crate::courier::{Courier, Delivering, Delivery};
use crate::crash::Hooks;
use crate::store::OutboxStore;
use crate::{Claimed, Error};

/// After a claim that found events, the next look comes after this share of `poll`: a busy
/// outbox is drained quickly, and an idle one still costs one query per `poll`.
pub const BUSY_POLL_SHARE: u32 = 16;

/// The shortest wait between two looks at a busy outbox.
pub const MIN_BUSY_POLL: Duration = Duration::from_millis(1);

/// How a dispatcher works.
#[derive(Debug, Clone)]
pub struct DispatcherOptions {
    /// The consumer's base URL, `http://127.0.0.1:PORT`.
    pub consumer: String,
    /// The name written into the claims it makes (for an operator reading them).
    pub owner: String,
    /// How long a claim is held; it is not renewed. It must outlast one delivery's whole budget,
    /// so that a live dispatcher loses a claim mid-delivery only when marking the event is
    /// itself delayed past the lease (a busy or unreachable database); the fence then refuses
    /// the late mark, and the event is delivered again, harmlessly.
    pub lease: Duration,
    /// How many deliveries run at once. [`Dispatcher::run`] holds half as many more events
    /// claimed ahead when the lease covers two budgets ([`Dispatcher::claims_ahead`]).
    pub concurrency: usize,
    /// The longest wait before looking again when nothing was due. Right after a claim that
    /// found events the wait is a sixteenth of it (at least 1 ms), and it doubles with each
    /// whole wait that finds nothing: an event accepted under steady load waits a few
    /// milliseconds, an idle outbox is looked at `1 / poll` times a second.
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
    /// deliveries at once, a poll of at most 25 ms; 3 attempts within 10 s (3 s each) per
    /// delivery; then 1 s doubling up to 60 s between deliveries; settled events kept a day.
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

/// The delivery of one claimed event, the piece a lab under `labs/` replaces: the one method
/// has the correct default, and [`StandardDelivery`] uses it. A seam for the labs, hidden from
/// the documented API (see `labs/README.md`).
#[doc(hidden)]
pub trait DeliverySteps: Send + Sync + 'static {
    /// Delivers one claimed event and settles it in the outbox: see
    /// [`crate::deliver::deliver`].
    fn deliver<'a>(&self, courier: &'a Courier, claimed: &'a Claimed) -> Delivering<'a> {
        crate::deliver::deliver(courier, claimed)
    }
}

/// The correct delivery: what [`Dispatcher::new`] uses.
#[derive(Clone, Copy, Debug, Default)]
pub struct StandardDelivery;

impl DeliverySteps for StandardDelivery {}

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
    steps: &'static dyn DeliverySteps,
}

impl std::fmt::Debug for dyn DeliverySteps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DeliverySteps")
    }
}

impl Dispatcher {
    /// A dispatcher over `store`, once `options` pass [`DispatcherOptions::check`].
    pub fn new(store: Arc<dyn OutboxStore>, options: DispatcherOptions) -> Result<Self, Error> {
        Self::with_steps(store, options, &StandardDelivery, Hooks::none())
    }

    /// The same, with the delivery a lab replaces and hooks at the crash point.
    #[doc(hidden)]
    pub fn with_steps(
        store: Arc<dyn OutboxStore>,
        options: DispatcherOptions,
        steps: &'static dyn DeliverySteps,
        hooks: Hooks,
    ) -> Result<Self, Error> {
        options.check()?;
        let courier = Courier::new(
            store,
            &options.consumer,
            options.policy,
            options.redelivery,
            options.seed,
            hooks,
        );
        Ok(Self {
            courier: Arc::new(courier),
            options,
            steps,
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
    /// then claims nothing more and lets the deliveries it holds finish. A database that
    /// fails is tried again at the next poll: the dispatcher outlives a restarted server.
    ///
    /// A claim is a write that commits, so events are claimed in batches of half the
    /// concurrency, not one per finished delivery. When the lease allows (see
    /// [`Dispatcher::claims_ahead`]), the dispatcher also holds one batch claimed ahead, ready
    /// to start the moment a delivery ends, so that every slot stays busy between claims.
    pub async fn run(&self, shutdown: impl Future<Output = ()>) -> Tally {
        let mut shutdown = std::pin::pin!(shutdown);
        let mut stopping = false;
        let mut in_flight = JoinSet::new();
        let mut ready: VecDeque<Claimed> = VecDeque::new();
        let mut tally = Tally::default();
        let mut since_sweep = tokio::time::Instant::now();
        let busy_wait = (self.options.poll / BUSY_POLL_SHARE)
            .max(MIN_BUSY_POLL)
            .min(self.options.poll);
        let mut wait = self.options.poll;
        // Whether the last wait ran to its end: only a whole wait that found nothing doubles
        // the next one (a finished delivery also wakes the loop, and its look is not one).
        let mut waited = false;
        let concurrency = self.options.concurrency;
        let batch = concurrency.div_ceil(2);
        // The most events held at once: in flight, and ready to start.
        let most = concurrency + self.claims_ahead();
        loop {
            self.start_ready(&mut in_flight, &mut ready);
            let room = most - in_flight.len() - ready.len();
            let mut claimed_any = false;
            if !stopping && room >= batch {
                match self.claim(room).await {
                    Ok(claimed) => {
                        claimed_any = !claimed.is_empty();
                        if claimed_any {
                            wait = busy_wait;
                        } else if waited {
                            wait = (wait * 2).min(self.options.poll);
                        }
                        waited = false;
                        tally.claimed += claimed.len();
                        ready.extend(claimed);
                        self.start_ready(&mut in_flight, &mut ready);
                    }
                    Err(error) => eprintln!("dispatcher: cannot claim: {error}"),
                }
            }
            if stopping && in_flight.is_empty() && ready.is_empty() {
                return tally;
            }
            if since_sweep.elapsed() >= SWEEP_EVERY {
                since_sweep = tokio::time::Instant::now();
                self.sweep().await;
            }
            if claimed_any && most - in_flight.len() - ready.len() >= batch {
                continue; // more may be due, and there is room for a batch: look again at once
            }
            tokio::select! {
                Some(result) = in_flight.join_next(), if !in_flight.is_empty() => {
                    tally.add(self.logged(result));
                }
                () = tokio::time::sleep(wait), if !stopping => waited = true,
                () = &mut shutdown, if !stopping => stopping = true,
            }
        }
    }

    /// Starts claimed events, oldest claim first, while a slot is free.
    fn start_ready(
        &self,
        in_flight: &mut JoinSet<(Claimed, Result<Delivery, Error>)>,
        ready: &mut VecDeque<Claimed>,
    ) {
        while in_flight.len() < self.options.concurrency
            && let Some(claimed) = ready.pop_front()
        {
            in_flight.spawn(self.delivery(claimed));
        }
    }

    /// How many events [`Dispatcher::run`] holds claimed ahead of a free slot: half the
    /// concurrency when the lease covers two deliveries' budgets, else none.
    ///
    /// An event claimed ahead waits for a slot at most one budget (by then every delivery in
    /// flight when it was claimed has ended, and they outnumber the events waiting), then
    /// runs for at most one more. Within a lease of two budgets it is never delivered after
    /// its claim has lapsed; with a shorter lease the dispatcher claims only what it starts.
    pub fn claims_ahead(&self) -> usize {
        if self.options.lease > self.options.policy.budget() * 2 {
            self.options.concurrency.div_ceil(2)
        } else {
            0
        }
    }

    /// This dispatcher's options.
    pub fn options(&self) -> &DispatcherOptions {
        &self.options
    }

    async fn claim(&self, limit: usize) -> Result<Vec<Claimed>, Error> {
        let (owner, lease) = (&self.options.owner, self.options.lease);
        self.courier.store().claim(owner, lease, limit).await
    }

    fn delivery(
        &self,
        claimed: Claimed,
    ) -> impl Future<Output = (Claimed, Result<Delivery, Error>)> + use<> {
        let courier = Arc::clone(&self.courier);
        let steps = self.steps;
        async move {
            let delivery = steps.deliver(&courier, &claimed).await;
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
        let kept = self.options.keep_settled;
        match self.courier.store().sweep(kept).await {
            Ok(_) => {}
            Err(Error::Interrupted(_)) => eprintln!("dispatcher: the sweep did not finish"),
            Err(error) => eprintln!("dispatcher: cannot sweep settled events: {error}"),
        }
    }
}

/// How often a running dispatcher deletes settled events past `keep_settled`.
const SWEEP_EVERY: Duration = Duration::from_secs(60);
