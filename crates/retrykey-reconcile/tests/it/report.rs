//! The operator's view and actions: each uncertain operation listed with its age and owner, and
//! two actions that are idempotent and refuse, changing nothing, whatever would contradict the
//! records.

use std::time::Duration;

use retrykey::{Key, Request};
use retrykey_converter::ConverterDb;
use retrykey_outbox::{
    Acted, ActionError, Claimed, DocumentsOptions, EventId, EventRow, EventState, SqliteOutbox,
};
use retrykey_program::Clock;
use retrykey_reconcile::{self as reconcile, report};
use retrykey_testkit::ScratchFile;
use retrykey_wire::ConversionRequest;

/// A document file and a consumer file, deleted on drop.
struct Files {
    documents: ScratchFile,
    consumer: ScratchFile,
}

impl Files {
    fn new(name: &str) -> Self {
        Self {
            documents: ScratchFile::new(&format!("reconcile-{name}-documents")),
            consumer: ScratchFile::new(&format!("reconcile-{name}-consumer")),
        }
    }

    /// The document service's file, read with a clock `ahead` of this one.
    fn documents(&self, ahead: Duration) -> SqliteOutbox {
        let options = DocumentsOptions {
            clock: Clock::ahead(ahead),
            ..DocumentsOptions::default()
        };
        SqliteOutbox::open(self.documents.path(), options).expect("opens")
    }
}

/// The claims' lease: a minute, so that a claim is live for every look with this machine's
/// clock however slowly the test gets there; the clock `LATER` is past it.
const LEASE: Duration = Duration::from_secs(60);
const LATER: Duration = Duration::from_secs(120);

/// Four jobs, one in each situation an operator meets:
/// 1 delivered; 2 claimed by a dispatcher that vanished; 3 whose delivery failed (waiting to be
/// tried again); 4 whose delivery failed although the consumer converted it (its answer lost).
fn four_jobs(files: &Files) -> (SqliteOutbox, ConverterDb, Vec<EventId>) {
    let (documents, consumer, events, _) = four_jobs_claimed(files);
    (documents, consumer, events)
}

/// The same, with the claims the four jobs were taken under.
fn four_jobs_claimed(files: &Files) -> (SqliteOutbox, ConverterDb, Vec<EventId>, Vec<Claimed>) {
    let documents = files.documents(Duration::ZERO);
    let events: Vec<EventId> = (1..=4)
        .map(|n| {
            let key = Key::new(format!("job-{n}")).unwrap();
            let job = Request::new(format!("report-{n}.docx"), n).unwrap();
            documents.accept(&key, &job).expect("accepted").event
        })
        .collect();
    let claimed = documents.claim("dispatcher-a", LEASE, 8).expect("claims");
    assert_eq!(claimed.len(), 4);
    let of = |n: usize| {
        claimed
            .iter()
            .find(|c| c.event.id == events[n - 1])
            .expect("claimed")
    };
    assert!(documents.mark_delivered(of(1), Some(1)).unwrap());
    let wait = Duration::from_secs(600);
    assert!(
        documents
            .postpone(of(3), "connection refused", wait)
            .unwrap()
    );
    let consumer = ConverterDb::open_sqlite(files.consumer.path()).expect("opens");
    let request = ConversionRequest {
        event: events[3].to_string(),
        job: "report-4.docx".to_owned(),
        units: 4,
    };
    consumer.convert(&request).expect("converted");
    assert!(
        documents
            .postpone(of(4), "timed out waiting for the reply", wait)
            .unwrap()
    );
    let claimed = (1..=4).map(|n| of(n).clone()).collect();
    (documents, consumer, events, claimed)
}

/// One operator action, tried when called.
type Attempt<'a> = Box<dyn Fn() -> Result<Acted, ActionError> + 'a>;

fn ids(items: &[reconcile::Uncertain]) -> Vec<u64> {
    items.iter().map(|item| item.operation).collect()
}

// Each uncertain operation is in its list, with its age and owner: a claim past its lease in the
// first, old undelivered jobs in the second, a conversion the outbox never heard of in the
// third. A settled job is in none.
#[test]
fn uncertain_operations_are_listed_with_age_and_owner() {
    let files = Files::new("lists");
    let (_documents, consumer, events) = four_jobs(&files);

    let now = report(
        &files.documents(Duration::ZERO),
        Some(&consumer),
        Duration::from_secs(60),
    )
    .expect("a report");
    assert!(now.keys_in_flight_past_lease.is_empty(), "{now:?}");
    assert!(
        now.undelivered.is_empty(),
        "young jobs are not listed yet: {now:?}"
    );
    assert_eq!(
        ids(now.converted_not_acknowledged.as_ref().unwrap()),
        vec![4]
    );

    let later = report(
        &files.documents(LATER),
        Some(&consumer),
        Duration::from_secs(60),
    )
    .expect("a report");
    assert_eq!(ids(&later.keys_in_flight_past_lease), vec![2]);
    let lapsed = &later.keys_in_flight_past_lease[0];
    assert_eq!(lapsed.event, events[1]);
    assert_eq!(lapsed.owner.as_deref(), Some("dispatcher-a"));
    let past = i64::try_from((LATER - LEASE).as_millis()).unwrap();
    assert!(
        lapsed.lease_lapsed_ms.unwrap() >= past - 1_000,
        "{lapsed:?}"
    );
    assert!(lapsed.age_ms >= 120_000, "{lapsed:?}");
    assert_eq!(ids(&later.undelivered), vec![3, 4]);
    assert_eq!(
        later.undelivered[0].last_error.as_deref(),
        Some("connection refused")
    );
    let converted = later.converted_not_acknowledged.as_ref().unwrap();
    assert_eq!(ids(converted), vec![4]);
    assert_eq!(converted[0].conversion, Some(1));

    let text = reconcile::text(&later);
    assert!(
        text.starts_with("keys in flight past their lease: 1\n"),
        "{text}"
    );
    assert!(text.contains("undelivered after 1m00s: 2\n"), "{text}");
    assert!(text.contains("converted, not acknowledged: 1\n"), "{text}");
    assert!(
        text.contains(&format!(
            "{}  job 2  report-2.docx  claimed by dispatcher-a",
            events[1]
        )),
        "{text}"
    );
    let json = serde_json::to_value(&later).expect("JSON");
    assert_eq!(
        json["keys_in_flight_past_lease"][0]["owner"],
        "dispatcher-a"
    );
    assert_eq!(json["undelivered"][1]["state"], "pending");
    assert_eq!(json["converted_not_acknowledged"][0]["conversion"], 1);

    let without_consumer =
        report(&files.documents(LATER), None, Duration::from_secs(60)).expect("a report");
    assert_eq!(without_consumer.converted_not_acknowledged, None);
    assert!(reconcile::text(&without_consumer).contains("not checked (give --consumer-db)"));
}

/// Every event, to compare before and after a refused action.
fn snapshot(documents: &SqliteOutbox) -> Vec<EventRow> {
    documents.events().expect("events")
}

// Re-driving and marking failed are idempotent: the second time changes nothing and says so.
#[test]
fn actions_are_idempotent() {
    let files = Files::new("idempotent");
    let (_documents, _consumer, events) = four_jobs(&files);
    let later = files.documents(LATER);
    let (lapsed, waiting) = (events[1].as_str(), events[2].as_str());

    let first = later.redrive(lapsed).unwrap().expect("re-driven");
    assert!(first.changed);
    assert_eq!(
        (first.event.state, first.event.lease_until_ms),
        (EventState::Pending, None)
    );
    let second = later.redrive(lapsed).unwrap().expect("re-driven again");
    assert!(!second.changed, "{second:?}");
    assert_eq!(second.event, first.event);

    let failed = later
        .mark_failed(waiting, "customer cancelled")
        .unwrap()
        .expect("failed");
    assert!(failed.changed);
    assert_eq!(
        (failed.event.state, failed.event.reason.as_deref()),
        (EventState::Failed, Some("customer cancelled"))
    );
    let again = later
        .mark_failed(waiting, "customer cancelled")
        .unwrap()
        .expect("again");
    assert!(!again.changed);
    assert_eq!(again.event, failed.event);
    assert!(reconcile::acted_text("fail", &again).contains("nothing changed"));
}

// An action that would contradict the records is refused and changes nothing: an unknown id,
// a delivered event, a failed one (re-driven, or failed again for another reason), one that a
// dispatcher holds right now, one the consumer converted, and a reason that is no reason.
#[test]
fn refused_actions_change_nothing() {
    let files = Files::new("refused");
    let (_documents, consumer, events) = four_jobs(&files);
    let later = files.documents(LATER);
    let (delivered, lapsed, waiting, converted) = (
        events[0].as_str(),
        events[1].as_str(),
        events[2].as_str(),
        events[3].as_str(),
    );
    later
        .mark_failed(waiting, "customer cancelled")
        .unwrap()
        .expect("failed");
    // Job 2 re-driven and claimed again by a dispatcher that is alive.
    later.redrive(lapsed).unwrap().expect("re-driven");
    let held = later
        .claim("dispatcher-b", Duration::from_secs(60), 1)
        .unwrap();
    assert_eq!(held.len(), 1);

    let before = snapshot(&later);
    // Each action is tried inside the loop, so that the snapshot after it speaks of it alone.
    #[rustfmt::skip]
    let refusals: Vec<(&str, Attempt)> = vec![
        ("redrive an unknown id", Box::new(|| later.redrive("no-such-event").unwrap())),
        ("fail an unknown id", Box::new(|| later.mark_failed("no-such-event", "gone").unwrap())),
        ("redrive a delivered event", Box::new(|| later.redrive(delivered).unwrap())),
        ("fail a delivered event", Box::new(|| later.mark_failed(delivered, "oops").unwrap())),
        ("redrive a failed event", Box::new(|| later.redrive(waiting).unwrap())),
        ("fail it for another reason", Box::new(|| later.mark_failed(waiting, "another").unwrap())),
        ("fail a claimed event", Box::new(|| later.mark_failed(lapsed, "stuck").unwrap())),
        ("redrive a claimed event", Box::new(|| later.redrive(lapsed).unwrap())),
        ("fail a converted event", Box::new(|| {
            reconcile::mark_failed(&later, Some(&consumer), converted, "no answer").unwrap()
        })),
        ("fail with an empty reason", Box::new(|| later.mark_failed(converted, "").unwrap())),
        ("fail with a blank reason", Box::new(|| later.mark_failed(converted, "   ").unwrap())),
        ("fail with a long reason", Box::new(|| later.mark_failed(converted, &"r".repeat(201)).unwrap())),
        ("fail with a line break", Box::new(|| later.mark_failed(converted, "a\nb").unwrap())),
    ];
    for (what, attempt) in refusals {
        let refused = attempt().expect_err(what);
        let expected = match what {
            w if w.contains("unknown") => matches!(refused, ActionError::UnknownEvent(_)),
            w if w.contains("delivered") => matches!(refused, ActionError::Delivered { .. }),
            w if w.contains("failed event") || w.contains("another") => {
                matches!(refused, ActionError::MarkedFailed { .. })
            }
            w if w.contains("claimed") => matches!(
                &refused,
                ActionError::Claimed { owner, .. } if owner == "dispatcher-b"
            ),
            w if w.contains("converted") => {
                matches!(refused, ActionError::Converted { conversion: 1, .. })
            }
            _ => refused == ActionError::BadReason,
        };
        assert!(expected, "{what}: {refused:?}");
        assert_eq!(snapshot(&later), before, "{what} changed the outbox");
    }
}

// An action overrides the claims before it: after a re-drive, the dispatcher that held the
// lapsed claim (only paused, say) can neither postpone nor settle the event when it wakes. And
// an event marked failed that the consumer did convert is still listed as converted, not
// acknowledged: a lapsed lease proves nothing about a paused sender.
#[test]
fn actions_override_the_claims_before_them() {
    let files = Files::new("override");
    let (paused, consumer, events, claimed) = four_jobs_claimed(&files);
    let later = files.documents(LATER);

    let redriven = later
        .redrive(events[1].as_str())
        .unwrap()
        .expect("re-driven");
    assert_eq!(redriven.event.token, None, "the old claim's token is gone");
    assert!(
        !paused
            .postpone(&claimed[1], "late", Duration::from_secs(60))
            .unwrap()
    );
    assert!(!paused.mark_delivered(&claimed[1], Some(9)).unwrap());
    let row = later.find(events[1].as_str()).unwrap().unwrap();
    assert_eq!(
        (row.state, row.due_at_ms <= later.now_ms()),
        (EventState::Pending, true)
    );

    // Marked failed without asking the consumer (the plain action, not reconcile's).
    later
        .mark_failed(events[3].as_str(), "given up")
        .unwrap()
        .expect("failed");
    let report = report(&later, Some(&consumer), Duration::from_secs(60)).unwrap();
    let converted = report.converted_not_acknowledged.unwrap();
    assert_eq!(ids(&converted), vec![4]);
    assert_eq!(converted[0].state, EventState::Failed);
    assert!(
        !ids(&report.undelivered).contains(&4),
        "a failed event is settled: not undelivered"
    );
}

// Failed events are settled and stay until their job's record is swept: a full page of them,
// older than everything else, still leaves room for the job that is waiting.
#[test]
fn failed_events_do_not_crowd_out_undelivered_ones() {
    let files = Files::new("crowded");
    let documents = files.documents(Duration::ZERO);
    for n in 1..=reconcile::MAX_LISTED as u64 {
        let key = Key::new(format!("old-{n}")).unwrap();
        let job = Request::new("old.docx", 1).unwrap();
        let event = documents.accept(&key, &job).expect("accepted").event;
        let failed = documents.mark_failed(event.as_str(), "customer cancelled");
        assert!(failed.unwrap().expect("failed").changed);
    }
    let waiting = documents
        .accept(
            &Key::new("new-1").unwrap(),
            &Request::new("new.docx", 2).unwrap(),
        )
        .expect("accepted");

    let later = report(&files.documents(LATER), None, Duration::from_secs(60)).expect("a report");
    assert_eq!(
        ids(&later.undelivered),
        vec![waiting.receipt.operation],
        "{later:?}"
    );
    assert!(!later.is_clear());
}
