//! One run: a seed, a scenario and a stack in; a history and its verdict out.

use std::fmt;
use std::future::Future;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use rand::RngExt;
use retrykey::Key;
use retrykey_client::{Client, Outcome, Policy, RetrySteps};
use retrykey_history::{Ended, Entry, History, HistoryEvent, OpId, Violation, judge};
use retrykey_http::{Entries, StoreLimits};

use crate::net;
use crate::plan::{Plan, PlannedFault, rng};
use crate::server::{Persisting, Sockets, bank, serve};
use crate::stack::Stack;

/// Client hosts in every scenario.
pub const CLIENTS: u32 = 3;
/// Operations each client runs, one after the other.
pub const OPS_PER_CLIENT: u32 = 5;
/// The longest simulated time a run may take; a run still going then has stalled.
pub const TIME_LIMIT: Duration = Duration::from_secs(300);

/// Seeds within which [`SimScenario::Restart`] finds, on the correct stack, the double charge of
/// a record kept in the restarted server's memory (the crate's tests hold it; the first is
/// seed 0).
pub const RESTART_FINDS_WITHIN: u64 = 20;

/// What a run puts the stack through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SimScenario {
    /// Lost and cut replies, latency, partitions and holds, clients that give up, a handler
    /// that fails before its effect; the charges in the server's memory.
    LostReply,
    /// All of that, and the server host crashes and restarts once. The charges are on a
    /// separate bank host; the layer's records are in the server's memory, lost at the crash.
    Restart,
    /// The restart, with the layer's records in a store that survives it.
    RestartSurviving,
}

impl SimScenario {
    /// Every scenario, in the order the simulator lists them.
    pub const ALL: [SimScenario; 3] = [
        SimScenario::LostReply,
        SimScenario::Restart,
        SimScenario::RestartSurviving,
    ];

    /// The scenario's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            SimScenario::LostReply => "lost-reply",
            SimScenario::Restart => "restart",
            SimScenario::RestartSurviving => "restart-surviving",
        }
    }

    fn restarts(self) -> bool {
        self != SimScenario::LostReply
    }
}

impl fmt::Display for SimScenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A scenario name that is not one of [`SimScenario::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no scenario named {0:?} (lost-reply, restart, restart-surviving)")]
pub struct UnknownScenario(pub String);

impl FromStr for SimScenario {
    type Err = UnknownScenario;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        SimScenario::ALL
            .into_iter()
            .find(|scenario| scenario.name() == name)
            .ok_or_else(|| UnknownScenario(name.to_owned()))
    }
}

/// Why a run failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// The history broke a rule.
    Broke(Violation),
    /// The run did not end within [`TIME_LIMIT`], or a host failed outright.
    Stalled(String),
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::Broke(violation) => violation.fmt(f),
            Finding::Stalled(why) => write!(f, "stalled: {why}"),
        }
    }
}

/// One finished run.
#[derive(Clone, Debug)]
pub struct FinishedRun {
    /// Its seed.
    pub seed: u64,
    /// Its scenario's name.
    pub scenario: &'static str,
    /// The hardship drawn from the seed.
    pub plan: Plan,
    /// Everything recorded, in order.
    pub entries: Vec<Entry>,
    /// `None` when every rule held.
    pub finding: Option<Finding>,
    /// Simulated time the run took.
    pub took: Duration,
}

/// Runs `scenario` on `stack` under the hardship drawn from `seed`, and judges its history.
pub fn run<P: RetrySteps>(stack: &Stack<P>, scenario: SimScenario, seed: u64) -> FinishedRun {
    let mut scene = Scene::new(seed, scenario.restarts());
    let surviving: Option<Arc<dyn Entries>> =
        (scenario == SimScenario::RestartSurviving).then(|| (stack.store)(StoreLimits::default()));
    let keep = Persisting {
        history: scene.history.clone(),
        plan: Arc::new(scene.plan.clone()),
        seed,
        lives: Arc::clone(&scene.lives),
        surviving,
        bank: scenario.restarts(),
        engine: stack.engine,
        store: stack.store,
        sockets: Sockets::default(),
        crashed: Arc::clone(&scene.crashed),
    };
    scene.host("server", move || serve(keep.clone()));
    if scenario.restarts() {
        let history = scene.history.clone();
        scene.host("bank", move || bank(history.clone()));
    }
    scene.clients::<P>("/payments");
    scene.finish(scenario.name())
}

/// One run being set up: the seed's plan and history, and the simulated network with its
/// hosts. A scenario adds its service on host `server` (and any host behind it), then the
/// lab's clients, and runs it to the verdict. Stage 8's scenarios are built this way, and so
/// can a later stage's, with its own service.
pub struct Scene<'a> {
    /// The seed.
    pub seed: u64,
    /// The hardship drawn from it.
    pub plan: Plan,
    /// What the run records.
    pub history: History,
    sim: turmoil::Sim<'a>,
    lives: Arc<AtomicU64>,
    crashed: Arc<AtomicU32>,
}

impl<'a> Scene<'a> {
    /// The run of `seed`, its plan drawn with a restart of the server when `restart`.
    pub fn new(seed: u64, restart: bool) -> Self {
        let plan = Plan::draw(seed, CLIENTS, restart);
        let sim = simulation(&plan, seed);
        Scene {
            seed,
            plan,
            history: History::default(),
            sim,
            lives: Arc::new(AtomicU64::new(0)),
            crashed: Arc::new(AtomicU32::new(0)),
        }
    }

    /// Adds host `name`, running what `software` makes at each of its starts.
    pub fn host<F, Fut>(&mut self, name: &str, software: F)
    where
        F: Fn() -> Fut + 'a,
        Fut: Future<Output = Result<(), Box<dyn std::error::Error>>> + 'static,
    {
        self.sim.host(name, software);
    }

    /// Adds the [`CLIENTS`] client hosts, each running its operations with the retry client
    /// of steps `P`, posting `{"amount": N}` to `path` on host `server`.
    pub fn clients<P: RetrySteps>(&mut self, path: &'static str) {
        for client in 1..=CLIENTS {
            let history = self.history.clone();
            let patience = self.plan.patience[client as usize - 1];
            let seed = self.seed;
            self.sim.client(format!("client-{client}"), async move {
                operations::<P>(history, seed, client, patience, path).await;
                Ok(())
            });
        }
    }

    /// Runs to the end, applying the plan's faults on time, and judges the history; names
    /// the run's scenario `scenario`.
    pub fn finish(mut self, scenario: &'static str) -> FinishedRun {
        let outcome = drive(
            &mut self.sim,
            &self.plan,
            &self.history,
            &self.lives,
            &self.crashed,
        );
        let took = self.sim.elapsed();
        // Taken before the simulation is dropped: dropping it drops every task still running.
        let entries = self.history.entries();
        let finding = match outcome {
            Err(why) => Some(Finding::Stalled(why)),
            Ok(()) => judge(&entries).err().map(Finding::Broke),
        };
        FinishedRun {
            seed: self.seed,
            scenario,
            plan: self.plan,
            entries,
            finding,
            took,
        }
    }
}

/// The simulated network of one run: its latency drawn from the plan, its randomness from the
/// seed, and no random message loss (the plan's faults are the only ones).
fn simulation<'a>(plan: &Plan, seed: u64) -> turmoil::Sim<'a> {
    let mut builder = turmoil::Builder::new();
    builder
        .simulation_duration(TIME_LIMIT)
        .min_message_latency(plan.latency.0)
        .max_message_latency(plan.latency.1)
        .tick_duration(Duration::from_millis(5))
        .fail_rate(0.0)
        .rng_seed(seed);
    builder.build()
}

/// Steps the simulation to its end, applying the plan's faults when their time comes: `Ok`
/// when every client finished, the simulator's reason when it stopped first.
fn drive(
    sim: &mut turmoil::Sim<'_>,
    plan: &Plan,
    history: &History,
    lives: &AtomicU64,
    crashed: &AtomicU32,
) -> Result<(), String> {
    let mut pending = schedule(plan);
    loop {
        let now = sim.elapsed();
        history.set_now(now.as_millis() as u64);
        while pending.first().is_some_and(|(at, _)| *at <= now) {
            let (_, action) = pending.remove(0);
            apply(sim, history, lives, crashed, action);
        }
        match sim.step() {
            Ok(true) => return Ok(()),
            Ok(false) => {}
            Err(error) => return Err(error.to_string()),
        }
    }
}

/// One client host's operations, one after the other; `wait` is how long it waits for each
/// answer before it gives up on that attempt.
async fn operations<P: RetrySteps>(
    history: History,
    seed: u64,
    client: u32,
    wait: Duration,
    path: &'static str,
) {
    let host = format!("client-{client}");
    let retries = Client::builder(Policy::default())
        .seed(rng(seed, 10 + u64::from(client)).random())
        .steps::<P>()
        .build();
    let mut amounts = rng(seed, 20 + u64::from(client));
    // ANCHOR: operations
    for op in 1..=OPS_PER_CLIENT {
        let id = OpId { client, op };
        // The first operation of every client uses one shared key: the first
        // two clients send the same payment under it, the third a changed one.
        // Every other operation gets its key from the retry client, chosen
        // once before its first attempt.
        let send = |attempt, pay| net::post(&history, path, id, attempt, pay, wait);
        let outcome = if op == 1 {
            let key = Key::new(format!("shared-{seed}")).expect("a valid key");
            let amount = if client == 3 { 11 } else { 10 };
            retries
                .run_with_key(key, |attempt| send(attempt, amount))
                .await
        } else {
            let amount = amounts.random_range(1..=100);
            retries.run(|attempt| send(attempt, amount)).await
        };
        // ANCHOR_END: operations
        let (attempts, how) = match outcome {
            Outcome::Succeeded {
                value,
                replayed,
                attempts,
            } => (
                attempts,
                Ended::Succeeded {
                    body: String::from_utf8_lossy(&value.body).into_owned(),
                    replayed,
                },
            ),
            Outcome::Rejected { failure, attempts } => (attempts, Ended::Rejected(failure.status)),
            Outcome::Unknown { attempts, .. } => (attempts, Ended::Unknown),
        };
        history.record(&host, HistoryEvent::Ended { id, attempts, how });
    }
}

enum Action {
    Fault(PlannedFault),
    Repair(u32),
    Release(u32),
    Bounce,
}

fn schedule(plan: &Plan) -> Vec<(Duration, Action)> {
    let mut actions = Vec::new();
    for (at, fault) in &plan.faults {
        let end = match fault {
            PlannedFault::Partition { client, lasting } => {
                (*at + *lasting, Action::Repair(*client))
            }
            PlannedFault::Hold { client, lasting } => (*at + *lasting, Action::Release(*client)),
            PlannedFault::Restart { down_for } => (*at + *down_for, Action::Bounce),
        };
        actions.push((*at, Action::Fault(fault.clone())));
        actions.push(end);
    }
    // Stable: at one moment, a fault's start stays before an end drawn later.
    actions.sort_by_key(|(at, _)| *at);
    actions
}

fn apply(
    sim: &mut turmoil::Sim<'_>,
    history: &History,
    lives: &AtomicU64,
    crashed: &AtomicU32,
    action: Action,
) {
    let network = |what: String| history.record("network", HistoryEvent::Fault(what));
    match action {
        Action::Fault(PlannedFault::Partition { client, lasting }) => {
            network(format!(
                "partition client-{client} | server for {} ms",
                lasting.as_millis()
            ));
            sim.partition(format!("client-{client}"), "server");
        }
        Action::Fault(PlannedFault::Hold { client, lasting }) => {
            network(format!(
                "hold client-{client} | server for {} ms",
                lasting.as_millis()
            ));
            sim.hold(format!("client-{client}"), "server");
        }
        Action::Repair(client) => {
            network(format!("repair client-{client} | server"));
            sim.repair(format!("client-{client}"), "server");
        }
        Action::Release(client) => {
            network(format!("release client-{client} | server"));
            sim.release(format!("client-{client}"), "server");
        }
        Action::Fault(PlannedFault::Restart { .. }) => {
            let life = lives.load(Ordering::SeqCst) as u32;
            crashed.store(life, Ordering::SeqCst);
            history.record("server", HistoryEvent::Crashed { life });
            sim.crash("server");
        }
        Action::Bounce => sim.bounce("server"),
    }
}
