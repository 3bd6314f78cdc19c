//! The outbox's fault scenarios with real processes: a `converter` and one or two `dispatcher`s
//! on loopback, jobs accepted by this process, and one of them killed, stopped, or its database
//! restarted in the middle of the run.
//!
//! Every scenario ends the same way: it waits (bounded) until every accepted job's event is
//! delivered, then reads both databases and holds them to one rule: each accepted job converted
//! exactly once, no event lost, no event invented. `tests/it/faults.rs` of `retrykey-outbox` runs
//! each scenario as a test; `just outbox-faults` prints them as a table.

pub mod place;
pub mod postgres;
pub mod process;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use retrykey::{Key, Request};
use retrykey_outbox::store::{OutboxStore, wait};
use retrykey_outbox::{EventId, EventState};

use crate::rig::free_port;
pub use place::Place;
use process::Program;

/// The programs a scenario starts.
#[derive(Debug, Clone)]
pub struct Programs {
    /// The `dispatcher` binary.
    pub dispatcher: PathBuf,
    /// The `converter` binary.
    pub converter: PathBuf,
}

impl Programs {
    /// The binaries in `dir` (a cargo target folder such as `target/debug`).
    pub fn in_dir(dir: &Path) -> Self {
        Self {
            dispatcher: dir.join("dispatcher"),
            converter: dir.join("converter"),
        }
    }
}

/// The consumer's server, `converter`, from the cargo target folder (`target/debug`) that the
/// running test was built into.
///
/// Cargo tells a test where its own package's binaries are, and `converter` belongs to
/// `retrykey-converter`, not to the outbox: `cargo test` builds it with that package, and a
/// test of the outbox alone needs it built first. Panics, naming the command, when it is not
/// there.
pub fn converter_binary() -> PathBuf {
    let me = std::env::current_exe().expect("the running test's path");
    let mut dir = me.parent().expect("the running test's folder");
    // Tests run from `target/debug/deps`; the binaries are one folder up.
    if dir.ends_with("deps") {
        dir = dir.parent().expect("the target folder");
    }
    let converter = dir.join("converter");
    assert!(
        converter.is_file(),
        "{} is missing: build it first (cargo build -p retrykey-converter --bin converter)",
        converter.display()
    );
    converter
}

/// One row of the fault table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The dispatcher is killed after the consumer answered, before it marks the event.
    DispatcherAfterSending,
    /// The consumer is killed after its conversion committed, before it answers.
    ConsumerAfterConverting,
    /// The consumer is killed and stays down for a while, then starts again.
    ConsumerDown,
    /// The consumer is stopped (SIGSTOP) for a while, then resumed.
    ConsumerStopped,
    /// The database server is restarted in the middle of the run (PostgreSQL).
    DatabaseRestarted,
    /// Two dispatchers share the outbox; one is killed holding claims, then started again.
    TwoDispatchers,
}

impl Fault {
    /// Every row, in the table's order.
    pub const ALL: [Fault; 6] = [
        Fault::DispatcherAfterSending,
        Fault::ConsumerAfterConverting,
        Fault::ConsumerDown,
        Fault::ConsumerStopped,
        Fault::DatabaseRestarted,
        Fault::TwoDispatchers,
    ];

    /// What is killed or stopped.
    pub fn what(self) -> &'static str {
        match self {
            Fault::DispatcherAfterSending | Fault::TwoDispatchers => "dispatcher",
            Fault::ConsumerAfterConverting | Fault::ConsumerDown | Fault::ConsumerStopped => {
                "consumer"
            }
            Fault::DatabaseRestarted => "database",
        }
    }

    /// When.
    pub fn when(self) -> &'static str {
        match self {
            Fault::DispatcherAfterSending => "killed after sending, before marking delivered",
            Fault::ConsumerAfterConverting => "killed after converting, before answering",
            Fault::ConsumerDown => "killed, down for 3 s, started again",
            Fault::ConsumerStopped => "stopped (SIGSTOP) for 3 s, then resumed",
            Fault::DatabaseRestarted => "restarted mid-run (immediate shutdown)",
            Fault::TwoDispatchers => "two at once; one killed holding claims",
        }
    }

    /// Whether the scenario needs a PostgreSQL server of its own (it restarts it).
    pub fn restarts_the_database(self) -> bool {
        self == Fault::DatabaseRestarted
    }
}

/// What one scenario came to.
#[derive(Debug, Clone)]
pub struct Row {
    /// The scenario.
    pub fault: Fault,
    /// `sqlite` or `postgres`.
    pub backend: &'static str,
    /// Jobs accepted.
    pub jobs: usize,
    /// Claims the dispatchers made, over all events (one per delivery).
    pub claims: u64,
    /// Conversions the consumer stored.
    pub conversions: usize,
    /// Deliveries the consumer answered from its record: the redeliveries its dedup absorbed.
    pub redeliveries: usize,
    /// Events the outbox shows delivered.
    pub delivered: usize,
    /// Everything that breaks the rule, one sentence each; empty when the row holds.
    pub problems: Vec<String>,
}

impl Row {
    /// Panics with the problems, if there are any.
    #[track_caller]
    pub fn assert_holds(&self) {
        assert!(
            self.problems.is_empty(),
            "{} {} ({}): {}",
            self.fault.what(),
            self.fault.when(),
            self.backend,
            self.problems.join("; ")
        );
    }
}

/// Runs `fault` with `programs` on `place`.
pub fn run(fault: Fault, programs: &Programs, place: Place) -> Row {
    let scenario = Scenario::new(programs, place);
    match fault {
        Fault::DispatcherAfterSending => scenario.dispatcher_after_sending(),
        Fault::ConsumerAfterConverting => scenario.consumer_after_converting(),
        Fault::ConsumerDown => scenario.consumer_down(),
        Fault::ConsumerStopped => scenario.consumer_stopped(),
        Fault::DatabaseRestarted => scenario.database_restarted(),
        Fault::TwoDispatchers => scenario.two_dispatchers(),
    }
}

/// The longest any one wait of a scenario may take.
const WAIT: Duration = Duration::from_secs(60);

/// How long a consumer stays down or stopped.
const OUTAGE: Duration = Duration::from_secs(3);

/// The dispatchers' settings: a short lease and budget, so that takeovers and redeliveries
/// happen within seconds.
const DISPATCHER_FLAGS: [&str; 13] = [
    "--lease",
    "2s",
    "--budget",
    "1s",
    "--attempt-timeout",
    "400ms",
    "--redelivery-base",
    "100ms",
    "--redelivery-cap",
    "1s",
    "--poll",
    "20ms",
    "--log",
];

struct Scenario<'a> {
    programs: &'a Programs,
    port: u16,
    /// Dropped before `place`, so that its connections close before the databases go.
    documents: Box<dyn OutboxStore>,
    place: Place,
    accepted: Vec<EventId>,
}

impl<'a> Scenario<'a> {
    fn new(programs: &'a Programs, place: Place) -> Self {
        let documents = place.open_documents();
        Self {
            programs,
            place,
            port: free_port().expect("a free port"),
            documents,
            accepted: Vec::new(),
        }
    }

    fn dispatcher_after_sending(mut self) -> Row {
        let _consumer = self.consumer(false);
        let mut a = self.dispatcher("dispatcher-a", 16, true);
        self.accept(1..=3);
        a.wait_for("paused at sent", WAIT);
        a.kill();
        let b = self.dispatcher("dispatcher-b", 16, false);
        self.wait_delivered();
        self.row(Fault::DispatcherAfterSending, &[&a, &b])
    }

    fn consumer_after_converting(mut self) -> Row {
        let mut consumer = self.consumer(true);
        let a = self.dispatcher("dispatcher-a", 16, false);
        self.accept(1..=3);
        consumer.wait_for("paused at converted", WAIT);
        consumer.kill();
        let _consumer = self.consumer(false);
        self.wait_delivered();
        self.row(Fault::ConsumerAfterConverting, &[&a])
    }

    fn consumer_down(mut self) -> Row {
        let mut consumer = self.consumer(false);
        let a = self.dispatcher("dispatcher-a", 16, false);
        self.accept(1..=2);
        self.wait_delivered();
        consumer.kill();
        self.accept(3..=5);
        std::thread::sleep(OUTAGE);
        let _consumer = self.consumer(false);
        self.wait_delivered();
        self.row(Fault::ConsumerDown, &[&a])
    }

    fn consumer_stopped(mut self) -> Row {
        let consumer = self.consumer(false);
        let a = self.dispatcher("dispatcher-a", 16, false);
        self.accept(1..=2);
        self.wait_delivered();
        consumer.stop();
        self.accept(3..=5);
        std::thread::sleep(OUTAGE);
        consumer.resume();
        self.wait_delivered();
        self.row(Fault::ConsumerStopped, &[&a])
    }

    fn database_restarted(mut self) -> Row {
        let _consumer = self.consumer(false);
        let a = self.dispatcher("dispatcher-a", 16, false);
        let (accepted, restarted) = std::thread::scope(|scope| {
            let server = self.place.server().expect("a private server");
            let restart = scope.spawn(move || {
                std::thread::sleep(Duration::from_millis(800));
                server.restart()
            });
            let mut accepted = Vec::new();
            for n in 1..=20 {
                accepted.push(self.accept_one(n));
                std::thread::sleep(Duration::from_millis(100));
            }
            (accepted, restart.join().expect("the restart thread"))
        });
        self.accepted = accepted;
        let mut row = {
            self.wait_delivered();
            self.row(Fault::DatabaseRestarted, &[&a])
        };
        if let Err(error) = restarted {
            row.problems
                .push(format!("the database did not restart: {error}"));
        }
        row
    }

    fn two_dispatchers(mut self) -> Row {
        let _consumer = self.consumer(false);
        // A claims first and stops at its crash point holding its claims; B, started while A
        // holds them, delivers everything else, and cannot touch A's claims while they last.
        let mut a = self.dispatcher("dispatcher-a", 4, true);
        self.accept(1..=20);
        a.wait_for("paused at sent", WAIT);
        let b = self.dispatcher("dispatcher-b", 4, false);
        self.wait_until("dispatcher-b to deliver 12 events", |events| events >= 12);
        a.kill();
        let a_again = self.dispatcher("dispatcher-a-again", 4, false);
        self.wait_delivered();
        self.row(Fault::TwoDispatchers, &[&a, &b, &a_again])
    }

    /// Starts the consumer on this scenario's port (stopping at its crash point, with `pause`).
    fn consumer(&self, pause: bool) -> Program {
        let mut args = vec!["--listen".to_owned(), format!("127.0.0.1:{}", self.port)];
        args.extend(self.place.consumer_args());
        if pause {
            args.extend(["--pause-at".to_owned(), "converted".to_owned()]);
        }
        let consumer = Program::start(
            "converter",
            &self.programs.converter,
            &args,
            &self.place.env(),
        );
        consumer.wait_for("listening on", WAIT);
        consumer
    }

    /// Starts a dispatcher named `owner` with `concurrency` deliveries at once (each stopping
    /// at its crash point, with `pause`).
    fn dispatcher(&self, owner: &str, concurrency: usize, pause: bool) -> Program {
        let mut args = self.place.documents_args();
        args.extend(
            [
                "--consumer",
                &format!("http://127.0.0.1:{}", self.port),
                "--owner",
                owner,
            ]
            .map(str::to_owned),
        );
        args.extend(DISPATCHER_FLAGS.map(str::to_owned));
        args.extend(["--concurrency".to_owned(), concurrency.to_string()]);
        if pause {
            args.extend(["--pause-at".to_owned(), "sent".to_owned()]);
        }
        let dispatcher = Program::start(owner, &self.programs.dispatcher, &args, &self.place.env());
        dispatcher.wait_for("dispatching to", WAIT);
        dispatcher
    }

    /// Accepts jobs `numbers`.
    fn accept(&mut self, numbers: std::ops::RangeInclusive<usize>) {
        for n in numbers {
            let event = self.accept_one(n);
            self.accepted.push(event);
        }
    }

    /// Accepts job `n`, retried with its key until it is answered (a database that is
    /// restarting refuses for a while; the key makes the retry safe); its event.
    fn accept_one(&self, n: usize) -> EventId {
        let key = Key::new(format!("job-{n}")).expect("a key");
        let job = Request::new(format!("report-{n}.docx"), n as u64).expect("a job");
        let deadline = Instant::now() + WAIT;
        loop {
            match wait(self.documents.accept(&key, &job)) {
                Ok(accepted) => return accepted.event,
                Err(_) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(error) => panic!("job {n} was not accepted within {WAIT:?}: {error}"),
            }
        }
    }

    /// Waits (bounded) until every accepted job's event is delivered.
    fn wait_delivered(&self) {
        let jobs = self.accepted.len();
        self.wait_until(&format!("all {jobs} events to be delivered"), |delivered| {
            delivered >= jobs
        });
    }

    /// Waits (bounded) until `done(events delivered)` holds; the outbox may refuse for a while.
    fn wait_until(&self, what: &str, done: impl Fn(usize) -> bool) {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Ok(events) = wait(self.documents.events()) {
                let delivered = events
                    .iter()
                    .filter(|row| row.state == EventState::Delivered)
                    .count();
                if done(delivered) {
                    return;
                }
            }
            assert!(
                Instant::now() < deadline,
                "gave up after {WAIT:?} waiting for {what}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Reads both databases and holds them to the rule.
    fn row(&self, fault: Fault, dispatchers: &[&Program]) -> Row {
        let events = wait(self.documents.events()).expect("the outbox's events");
        let conversions = self
            .place
            .open_consumer()
            .list()
            .expect("the consumer's conversions");
        let mut problems = Vec::new();
        let mut converted: BTreeMap<&str, usize> = BTreeMap::new();
        for conversion in &conversions {
            *converted.entry(conversion.event.as_str()).or_default() += 1;
        }
        for event in &self.accepted {
            match converted.get(event.as_str()).copied().unwrap_or(0) {
                1 => {}
                0 => problems.push(format!("the event of {event} was never converted (lost)")),
                n => problems.push(format!("event {event} was converted {n} times")),
            }
        }
        for conversion in &conversions {
            if !self.accepted.iter().any(|e| e.as_str() == conversion.event) {
                problems.push(format!(
                    "conversion {} is for event {}, which no accepted job has (invented)",
                    conversion.number, conversion.event
                ));
            }
        }
        for row in &events {
            if !self.accepted.contains(&row.event.id) {
                problems.push(format!(
                    "event {} of job {} belongs to no accepted job (invented)",
                    row.event.id, row.event.operation
                ));
            }
            if row.state != EventState::Delivered {
                problems.push(format!("event {} is {}", row.event.id, row.state));
            }
        }
        if events.len() != self.accepted.len() {
            problems.push(format!(
                "{} events for {} accepted jobs",
                events.len(),
                self.accepted.len()
            ));
        }
        Row {
            fault,
            backend: self.place.backend,
            jobs: self.accepted.len(),
            claims: events.iter().map(|row| u64::from(row.deliveries)).sum(),
            conversions: conversions.len(),
            redeliveries: dispatchers.iter().map(|d| d.count(", replayed")).sum(),
            delivered: events
                .iter()
                .filter(|row| row.state == EventState::Delivered)
                .count(),
            problems,
        }
    }
}
