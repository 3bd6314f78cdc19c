//! The outbox on PostgreSQL: the job and its event in one transaction, claims that never
//! overlap across processes, the fence, the operator's actions, and the whole path to a consumer
//! on PostgreSQL. Ignored, not passed, without a server.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

use retrykey::{Key, Request};
use retrykey_converter::{ConverterDb, service};
use retrykey_durable::crash::{Hooks, Point};
use retrykey_durable_checks::admin::url;
use retrykey_outbox::dispatcher::{Dispatcher, DispatcherOptions};
use retrykey_outbox::{ActionError, Documents, DocumentsOptions, EventState, Marks, PgDocuments};
use retrykey_program::Clock;
use retrykey_server::loopback::Server;
use retrykey_testkit::FreshSchema;

/// A schema of one test's own, empty at the start and dropped at the end.
struct Schema(FreshSchema);

impl Schema {
    fn new() -> Self {
        Self(FreshSchema::new(&url()))
    }

    fn open(&self, clock: Clock, hooks: Hooks) -> PgDocuments {
        self.open_with(DocumentsOptions {
            clock,
            hooks,
            ..DocumentsOptions::default()
        })
    }

    fn open_with(&self, options: DocumentsOptions) -> PgDocuments {
        let options = DocumentsOptions {
            pg_schema: self.0.name().to_owned(),
            ..options
        };
        PgDocuments::connect(&url(), options).expect("connects")
    }
}

fn job(n: u64) -> (Key, Request) {
    (
        Key::new(format!("job-{n}")).unwrap(),
        Request::new(format!("report-{n}.docx"), n).unwrap(),
    )
}

/// `jobs` jobs accepted on fresh PostgreSQL documents, and a consumer whose records are in a
/// fresh schema of its own; the schemas are dropped with the first value.
fn accepted_with_consumer(
    jobs: u64,
    marks: Marks,
) -> ((Schema, FreshSchema), Arc<PgDocuments>, Arc<ConverterDb>) {
    let schema = Schema::new();
    let consumer_schema = FreshSchema::new(&url());
    let documents = Arc::new(schema.open_with(DocumentsOptions {
        marks,
        ..DocumentsOptions::default()
    }));
    for n in 1..=jobs {
        let (key, request) = job(n);
        documents.accept(&key, &request).expect("accepted");
    }
    let consumer =
        Arc::new(ConverterDb::connect_postgres(&url(), consumer_schema.name()).expect("connects"));
    ((schema, consumer_schema), documents, consumer)
}

// A crash at any point of the job's transaction leaves the job and its event both or neither,
// and the retry with the same key ends with one of each.
#[test]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
fn pg_job_and_event_commit_together() {
    for point in Point::ALL {
        let schema = Schema::new();
        let crashing = schema.open(
            Clock::system(),
            Hooks::with(move |at| {
                if at == point {
                    panic!("the document service crashes at {at}");
                }
            }),
        );
        let (key, request) = job(1);
        let crashed = catch_unwind(AssertUnwindSafe(|| crashing.accept(&key, &request)));
        assert!(crashed.is_err(), "the accept did not reach {point}");
        drop(crashing);
        let restarted = schema.open(Clock::system(), Hooks::none());
        let committed = point == Point::AfterCommit;
        let left = (
            restarted.jobs().unwrap().len(),
            restarted.events().unwrap().len(),
        );
        assert_eq!(
            left,
            if committed { (1, 1) } else { (0, 0) },
            "after {point}"
        );
        let retry = restarted.accept(&key, &request).expect("the retry");
        assert_eq!(retry.receipt.replayed, committed);
        let events = restarted.events().unwrap();
        assert_eq!(events.len(), 1, "after {point} and the retry");
        assert_eq!(events[0].event.id, retry.event);
    }
}

// Eight claimers on two connections' worth of processes take 40 events between them: each event
// is claimed exactly once (SKIP LOCKED: nobody waits, nobody takes a row another is taking).
#[test]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
fn pg_claims_never_overlap() {
    let schema = Schema::new();
    let handles = [
        Arc::new(schema.open(Clock::system(), Hooks::none())),
        Arc::new(schema.open(Clock::system(), Hooks::none())),
    ];
    for n in 1..=40 {
        let (key, request) = job(n);
        handles[0].accept(&key, &request).expect("accepted");
    }
    let barrier = Arc::new(std::sync::Barrier::new(8));
    let claimers: Vec<_> = (0..8)
        .map(|n| {
            let (handle, barrier) = (Arc::clone(&handles[n % 2]), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait();
                let mut mine = Vec::new();
                loop {
                    let claimed = handle
                        .claim(&format!("claimer-{n}"), Duration::from_secs(60), 3)
                        .expect("claims");
                    if claimed.is_empty() {
                        return mine;
                    }
                    mine.extend(claimed.into_iter().map(|c| c.event.id));
                }
            })
        })
        .collect();
    let mut claims: BTreeMap<_, usize> = BTreeMap::new();
    for claimer in claimers {
        for id in claimer.join().expect("a claimer") {
            *claims.entry(id).or_default() += 1;
        }
    }
    assert_eq!(claims.len(), 40, "events claimed");
    assert!(claims.values().all(|&n| n == 1), "{claims:?}");
    let rows = handles[0].events().unwrap();
    assert!(rows.iter().all(|row| row.deliveries == 1));
}

// The fence and the operator's actions on PostgreSQL: a stale claim settles nothing, a re-drive
// is idempotent, a delivered event refuses both actions.
#[test]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
fn pg_fence_and_actions() {
    let schema = Schema::new();
    let a = schema.open(Clock::system(), Hooks::none());
    let later = schema.open(Clock::ahead(Duration::from_secs(120)), Hooks::none());
    for n in 1..=2 {
        let (key, request) = job(n);
        a.accept(&key, &request).expect("accepted");
    }
    let held_by_a = a.claim("dispatcher-a", Duration::from_secs(1), 1).unwrap();
    let taken = later
        .claim("dispatcher-b", Duration::from_secs(60), 1)
        .unwrap();
    assert_eq!(
        taken[0].event.id, held_by_a[0].event.id,
        "the oldest due event, taken over"
    );
    assert!(taken[0].token > held_by_a[0].token);
    assert!(!a.postpone(&held_by_a[0], "late", Duration::ZERO).unwrap());
    assert!(later.mark_delivered(&taken[0], Some(7)).unwrap());
    assert!(!a.mark_delivered(&held_by_a[0], Some(8)).unwrap());

    let delivered = taken[0].event.id.to_string();
    let before = a.events().unwrap();
    assert!(matches!(
        a.redrive(&delivered).unwrap(),
        Err(ActionError::Delivered { .. })
    ));
    assert!(matches!(
        a.mark_failed(&delivered, "no").unwrap(),
        Err(ActionError::Delivered { .. })
    ));
    assert!(matches!(
        a.redrive("nope").unwrap(),
        Err(ActionError::UnknownEvent(_))
    ));
    assert_eq!(a.events().unwrap(), before, "refusals change nothing");

    let other = before
        .iter()
        .find(|row| row.state == EventState::Pending)
        .unwrap();
    let id = other.event.id.to_string();
    let failed = a
        .mark_failed(&id, "job withdrawn")
        .unwrap()
        .expect("failed");
    assert!(failed.changed);
    assert!(
        !a.mark_failed(&id, "job withdrawn")
            .unwrap()
            .expect("again")
            .changed
    );
    assert_eq!(
        a.events()
            .unwrap()
            .iter()
            .map(|row| row.state)
            .collect::<Vec<_>>(),
        vec![EventState::Delivered, EventState::Failed]
    );
}

// The whole path on PostgreSQL: jobs accepted, a dispatcher delivers them to a consumer whose
// records are in PostgreSQL too; each converted once, each delivered with its number.
#[test]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
fn pg_jobs_are_converted_once() {
    converted_once(Marks::Durable);
}

// The same with marks that do not wait for the disk: the mark's own transaction, sent in one
// round trip, settles every event as the durable one does.
#[test]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
fn pg_relaxed_marks_settle_every_event() {
    converted_once(Marks::Relaxed);
}

fn converted_once(marks: Marks) {
    let (_schemas, documents, consumer) = accepted_with_consumer(5, marks);
    assert_eq!(documents.marks(), marks);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let round = runtime.block_on(async {
        let server = Server::start(service::router(Arc::clone(&consumer)))
            .await
            .unwrap();
        let options = DispatcherOptions {
            seed: Some(3),
            ..DispatcherOptions::new(server.url())
        };
        let outbox: Arc<dyn Documents> = Arc::clone(&documents) as Arc<dyn Documents>;
        let dispatcher = Dispatcher::new(outbox, options).expect("valid options");
        let round = dispatcher.round().await.expect("a round");
        server.stop().await;
        round
    });
    assert_eq!((round.claimed, round.delivered), (5, 5), "{round:?}");
    let conversions = consumer.list().unwrap();
    assert_eq!(conversions.len(), 5);
    for row in &documents.events().unwrap() {
        let number = conversions
            .iter()
            .find(|c| c.event == row.event.id.as_str())
            .map(|c| c.number);
        assert_eq!((row.state, row.conversion), (EventState::Delivered, number));
    }
}

// On PostgreSQL the dispatcher's calls and the consumer's dedup transaction are awaited on
// their runtime, not run on blocking threads: with the runtime's only blocking thread held for
// the whole round, the round still delivers every job.
#[test]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
fn pg_delivery_needs_no_blocking_thread() {
    let (_schemas, documents, consumer) = accepted_with_consumer(3, Marks::Durable);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (release, held) = std::sync::mpsc::channel::<()>();
    let holder = runtime.spawn_blocking(move || held.recv());
    let round = runtime.block_on(async {
        let server = Server::start(service::router(Arc::clone(&consumer)))
            .await
            .unwrap();
        let options = DispatcherOptions {
            seed: Some(5),
            ..DispatcherOptions::new(server.url())
        };
        let outbox: Arc<dyn Documents> = Arc::clone(&documents) as Arc<dyn Documents>;
        let dispatcher = Dispatcher::new(outbox, options).expect("valid options");
        let round = tokio::time::timeout(Duration::from_secs(30), dispatcher.round()).await;
        release.send(()).expect("the holder waits");
        holder.await.expect("the holder ends").expect("released");
        server.stop().await;
        round
    });
    let round = round
        .expect("the round ends without a blocking thread")
        .expect("a round");
    assert_eq!((round.claimed, round.delivered), (3, 3), "{round:?}");
    assert_eq!(consumer.count().unwrap(), 3);
}
