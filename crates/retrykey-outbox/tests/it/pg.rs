//! The outbox on PostgreSQL: the job and its event in one transaction, claims that never
//! overlap across processes, the fence and the operator's actions. (The whole path to a
//! consumer on PostgreSQL is the converter's test, `outbox_pg.rs`.) Ignored, not passed,
//! without a server.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

use retrykey::{Key, Request};
use retrykey_durable::crash::{Hooks, Point};
use retrykey_durable_checks::admin::url;
use retrykey_outbox::store::wait;
use retrykey_outbox::{ActionError, DocumentsOptions, EventState, OutboxStore, PgOutbox};
use retrykey_program::Clock;
use retrykey_testkit::FreshSchema;

/// A schema of one test's own, empty at the start and dropped at the end.
struct Schema(FreshSchema);

impl Schema {
    fn new() -> Self {
        Self(FreshSchema::new(&url()))
    }

    fn open(&self, clock: Clock, hooks: Hooks) -> PgOutbox {
        self.open_with(DocumentsOptions {
            clock,
            hooks,
            ..DocumentsOptions::default()
        })
    }

    fn open_with(&self, options: DocumentsOptions) -> PgOutbox {
        let options = DocumentsOptions {
            pg_schema: self.0.name().to_owned(),
            ..options
        };
        PgOutbox::connect(&url(), options).expect("connects")
    }
}

fn job(n: u64) -> (Key, Request) {
    (
        Key::new(format!("job-{n}")).unwrap(),
        Request::new(format!("report-{n}.docx"), n).unwrap(),
    )
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
            wait(restarted.jobs()).unwrap().len(),
            wait(restarted.events()).unwrap().len(),
        );
        assert_eq!(
            left,
            if committed { (1, 1) } else { (0, 0) },
            "after {point}"
        );
        let retry = restarted.accept(&key, &request).expect("the retry");
        assert_eq!(retry.receipt.replayed, committed);
        let events = wait(restarted.events()).unwrap();
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
                    let owner = format!("claimer-{n}");
                    let claimed =
                        wait(handle.claim(&owner, Duration::from_secs(60), 3)).expect("claims");
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
    let rows = wait(handles[0].events()).unwrap();
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
    let held_by_a = wait(a.claim("dispatcher-a", Duration::from_secs(1), 1)).unwrap();
    let taken = wait(later.claim("dispatcher-b", Duration::from_secs(60), 1)).unwrap();
    assert_eq!(
        taken[0].event.id, held_by_a[0].event.id,
        "the oldest due event, taken over"
    );
    assert!(taken[0].token > held_by_a[0].token);
    assert!(!wait(a.postpone(&held_by_a[0], "late", Duration::ZERO)).unwrap());
    assert!(wait(later.mark_delivered(&taken[0], Some(7))).unwrap());
    assert!(!wait(a.mark_delivered(&held_by_a[0], Some(8))).unwrap());

    let delivered = taken[0].event.id.to_string();
    let before = wait(a.events()).unwrap();
    assert!(matches!(
        wait(a.redrive(&delivered)).unwrap(),
        Err(ActionError::Delivered { .. })
    ));
    assert!(matches!(
        wait(a.mark_failed(&delivered, "no")).unwrap(),
        Err(ActionError::Delivered { .. })
    ));
    assert!(matches!(
        wait(a.redrive("nope")).unwrap(),
        Err(ActionError::UnknownEvent(_))
    ));
    assert_eq!(wait(a.events()).unwrap(), before, "refusals change nothing");

    let other = before
        .iter()
        .find(|row| row.state == EventState::Pending)
        .unwrap();
    let id = other.event.id.to_string();
    let failed = wait(a.mark_failed(&id, "job withdrawn"))
        .unwrap()
        .expect("failed");
    assert!(failed.changed);
    assert!(
        !wait(a.mark_failed(&id, "job withdrawn"))
            .unwrap()
            .expect("again")
            .changed
    );
    assert_eq!(
        wait(a.events())
            .unwrap()
            .iter()
            .map(|row| row.state)
            .collect::<Vec<_>>(),
        vec![EventState::Delivered, EventState::Failed]
    );
}
