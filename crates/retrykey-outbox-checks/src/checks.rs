//! The checks themselves, one function per behaviour, each opened by the requirement it checks.

use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use retrykey::{Key, Request};
use retrykey_durable::crash::{Hooks as LedgerHooks, Point as LedgerPoint};
use retrykey_outbox::EventState;
use retrykey_outbox::crash::{Hooks as DispatchHooks, Point as DispatchPoint};
use retrykey_program::Clock;
use retrykey_server::loopback::{LoopbackClient, LoopbackReply};
use retrykey_wire::{CONVERSIONS_PATH, ConversionRequest};

use crate::OutboxUnderTest;
use crate::rig::{AHEAD, LEASE, OutboxRig, drain, events, refused_url, run};

fn key(n: usize) -> Key {
    Key::new(format!("job-{n}")).expect("a valid key")
}

fn job(n: usize) -> Request {
    Request::new(format!("report-{n}.docx"), n as u64).expect("a valid job")
}

/// A job accepted under a key has exactly one event, wherever in its transaction a crash
/// falls: a crash before the commit leaves neither the job nor its event, a crash after it
/// leaves both, and the retry with the same key, in a new process on the same file, ends with
/// one job and its one event.
pub fn job_and_event_commit_together(subject: &OutboxUnderTest) {
    run(|| async {
        for point in LedgerPoint::ALL {
            let rig = OutboxRig::start(subject).await;
            let crashing = rig.documents(
                Clock::system(),
                LedgerHooks::with(move |at| {
                    if at == point {
                        panic!("the document service crashes at {at}");
                    }
                }),
            );
            let crashed = catch_unwind(AssertUnwindSafe(|| crashing.accept(&key(1), &job(1))));
            assert!(crashed.is_err(), "the accept did not reach {point}");
            drop(crashing);

            let restarted = rig.documents(Clock::system(), LedgerHooks::none());
            let committed = point == LedgerPoint::AfterCommit;
            let (jobs, events_left) = (
                restarted.jobs().expect("the jobs").len(),
                events(&restarted).len(),
            );
            let expected = if committed { (1, 1) } else { (0, 0) };
            assert_eq!(
                (jobs, events_left),
                expected,
                "(jobs, events) left by a crash at {point}"
            );

            let retry = restarted
                .accept(&key(1), &job(1))
                .unwrap_or_else(|error| panic!("the retry after a crash at {point}: {error}"));
            assert_eq!(
                retry.receipt.replayed, committed,
                "the retry after a crash at {point} replays exactly when the job had committed"
            );
            let after: Vec<_> = events(&restarted)
                .into_iter()
                .map(|row| (row.event.operation, row.event.id))
                .collect();
            assert_eq!(
                restarted.jobs().expect("the jobs"),
                vec![1],
                "after {point}"
            );
            assert_eq!(
                after,
                vec![(1, retry.event)],
                "one event, the job's, after a crash at {point} and the retry"
            );
        }
    });
}

/// Every accepted job is converted exactly once, its event delivered, and a client's retry of
/// an accept (same key) adds no job, no event and no conversion.
pub fn every_accepted_job_is_converted_once(subject: &OutboxUnderTest) {
    run(|| async {
        let rig = OutboxRig::start(subject).await;
        let documents = rig.documents(Clock::system(), LedgerHooks::none());
        let mut accepted = Vec::new();
        for n in 1..=5 {
            accepted.push(documents.accept(&key(n), &job(n)).expect("accepted"));
        }
        let retry = documents.accept(&key(3), &job(3)).expect("the retry");
        assert_eq!(
            (retry.receipt.replayed, &retry.event),
            (true, &accepted[2].event),
            "a retry of job 3 gets its first answer"
        );

        let dispatcher = rig.dispatcher(&documents, "dispatcher-a", DispatchHooks::none());
        let tally = drain(&dispatcher, 10).await;

        let expected: BTreeSet<String> = accepted.iter().map(|a| a.event.to_string()).collect();
        let converted: Vec<String> = rig.conversions().into_iter().map(|c| c.event).collect();
        assert_eq!(converted.len(), 5, "conversions of 5 jobs: {converted:?}");
        assert_eq!(
            converted.into_iter().collect::<BTreeSet<_>>(),
            expected,
            "one conversion per accepted job's event, no other"
        );
        let states: Vec<_> = events(&documents).iter().map(|row| row.state).collect();
        assert_eq!(states, vec![EventState::Delivered; 5], "the events' states");
        assert_eq!(tally.delivered, 5, "deliveries: {tally:?}");
    });
}

/// The consumer converts at most once per event id: the same event delivered three times in a
/// row, then eight times at once, makes one conversion, and every answer names it (the first
/// 201, every other a 200 replay).
pub fn redelivery_converts_once(subject: &OutboxUnderTest) {
    run(|| async {
        let rig = OutboxRig::start(subject).await;
        let client = LoopbackClient::new(rig.url());
        let deliver = |event: &'static str| {
            let client = client.clone();
            async move {
                let body = serde_json_body(event);
                client
                    .post(CONVERSIONS_PATH, &[("idempotency-key", event)], body)
                    .await
                    .expect("the consumer answers")
            }
        };
        let first = deliver("evt-again").await;
        assert_eq!((first.status, first.replayed()), (201, false), "{first:?}");
        for _ in 0..2 {
            assert_replay(&deliver("evt-again").await, &first);
        }
        let at_once: Vec<_> = (0..8).map(|_| tokio::spawn(deliver("evt-again"))).collect();
        for copy in at_once {
            assert_replay(&copy.await.expect("a delivery task"), &first);
        }
        // And eight first deliveries of a new event, all at once: one of them converts.
        let fresh: Vec<_> = (0..8).map(|_| tokio::spawn(deliver("evt-fresh"))).collect();
        let mut originals = 0;
        for copy in fresh {
            let reply = copy.await.expect("a delivery task");
            assert!(matches!(reply.status, 200 | 201), "{reply:?}");
            originals += usize::from(reply.status == 201);
        }
        let events: Vec<String> = rig.conversions().into_iter().map(|c| c.event).collect();
        assert_eq!(
            events,
            vec!["evt-again".to_owned(), "evt-fresh".to_owned()],
            "conversions after 11 deliveries of one event and 8 of another"
        );
        assert_eq!(
            originals, 1,
            "first (201) answers among 8 simultaneous deliveries"
        );
    });
}

/// The consumer crashes after its conversion commits and before it answers: the dispatcher
/// hears nothing, tries again within the same delivery, and the retry is answered from the
/// record. One conversion, and the event delivered.
pub fn consumer_crash_after_converting_converts_once(subject: &OutboxUnderTest) {
    run(|| async {
        let rig = OutboxRig::start(subject).await;
        let documents = rig.documents(Clock::system(), LedgerHooks::none());
        let accepted = documents.accept(&key(1), &job(1)).expect("accepted");
        rig.crash_consumer_once();

        let dispatcher = rig.dispatcher(&documents, "dispatcher-a", DispatchHooks::none());
        drain(&dispatcher, 10).await;

        let conversions = rig.conversions();
        assert_eq!(
            conversions.len(),
            1,
            "conversions after the consumer crashed once: {conversions:?}"
        );
        assert_eq!(conversions[0].event, accepted.event.as_str());
        assert_eq!(
            rig.answered(),
            2,
            "deliveries that reached the consumer's commit"
        );
        let row = &events(&documents)[0];
        assert_eq!(
            (row.state, row.deliveries),
            (EventState::Delivered, 1),
            "the event's state and claims: the redelivery was a retry within one delivery"
        );
    });
}

/// An event is marked delivered only once the consumer has acknowledged it: while the consumer
/// is down the event stays pending (its failure noted), and once delivered it records the
/// consumer's conversion number.
pub fn delivered_only_after_acknowledgement(subject: &OutboxUnderTest) {
    run(|| async {
        let rig = OutboxRig::start(subject).await;
        let documents = rig.documents(Clock::system(), LedgerHooks::none());
        documents.accept(&key(1), &job(1)).expect("accepted");

        let down = rig.dispatcher_to(
            &documents,
            "dispatcher-a",
            DispatchHooks::none(),
            &refused_url(),
        );
        let round = down.round().await.expect("a round");
        let row = &events(&documents)[0];
        assert_eq!(
            (row.state, row.deliveries, row.conversion),
            (EventState::Pending, 1, None),
            "the event after a delivery nobody acknowledged"
        );
        assert_eq!(
            round.postponed, 1,
            "a delivery to a consumer that is down: {round:?}"
        );
        assert!(row.last_error.is_some(), "the failure is noted: {row:?}");
        assert!(rig.conversions().is_empty(), "nothing was converted");

        // Later (past the redelivery wait), with the consumer up.
        let later = rig.documents(Clock::ahead(AHEAD), LedgerHooks::none());
        let up = rig.dispatcher(&later, "dispatcher-b", DispatchHooks::none());
        drain(&up, 10).await;
        let conversions = rig.conversions();
        assert_eq!(conversions.len(), 1, "{conversions:?}");
        let row = &events(&documents)[0];
        assert_eq!(
            (row.state, row.deliveries, row.conversion),
            (EventState::Delivered, 2, Some(conversions[0].number)),
            "the event once the consumer acknowledged it"
        );
    });
}

/// A dispatcher that crashes between sending an event and marking it delivered leaves it
/// pending under its claim; once the claim's lease lapses another dispatcher delivers it again,
/// the consumer answers from its record, and the event is delivered: one conversion.
pub fn dispatcher_crash_between_send_and_mark_redelivers(subject: &OutboxUnderTest) {
    run(|| async {
        let rig = OutboxRig::start(subject).await;
        let documents = rig.documents(Clock::system(), LedgerHooks::none());
        let accepted = documents.accept(&key(1), &job(1)).expect("accepted");

        let crashing = DispatchHooks::with(|at| {
            if at == DispatchPoint::Sent {
                panic!("the dispatcher crashes at {at}");
            }
        });
        let a = rig.dispatcher(&documents, "dispatcher-a", crashing);
        let round = a.round().await.expect("a round");
        assert_eq!(round.failed, 1, "the delivery crashed: {round:?}");

        // Dispatcher B comes later, past A's lease.
        let later = rig.documents(Clock::ahead(AHEAD), LedgerHooks::none());
        let b = rig.dispatcher(&later, "dispatcher-b", DispatchHooks::none());
        drain(&b, 10).await;

        let conversions = rig.conversions();
        assert_eq!(
            conversions.len(),
            1,
            "conversions after a crash between sending and marking, and the takeover: {conversions:?}"
        );
        assert_eq!(conversions[0].event, accepted.event.as_str());
        let row = &events(&documents)[0];
        assert_eq!(
            (row.state, row.deliveries, row.owner.as_deref()),
            (EventState::Delivered, 2, Some("dispatcher-b")),
            "the event after the takeover"
        );
        assert_eq!(row.conversion, Some(conversions[0].number));
        assert_eq!(
            rig.answered(),
            2,
            "deliveries that reached the consumer's commit"
        );
    });
}

/// Two dispatchers on one outbox share the work: every event is claimed once and delivered
/// once, and the consumer converts each once without a single redelivery.
pub fn two_dispatchers_share_the_work(subject: &OutboxUnderTest) {
    run(|| async {
        let rig = OutboxRig::start(subject).await;
        let documents = rig.documents(Clock::system(), LedgerHooks::none());
        for n in 1..=12 {
            documents.accept(&key(n), &job(n)).expect("accepted");
        }
        let other = rig.documents(Clock::system(), LedgerHooks::none());
        let a = rig.dispatcher(&documents, "dispatcher-a", DispatchHooks::none());
        let b = rig.dispatcher(&other, "dispatcher-b", DispatchHooks::none());
        let (by_a, by_b) = tokio::join!(drain(&a, 20), drain(&b, 20));

        assert_eq!(
            by_a.delivered + by_b.delivered,
            12,
            "deliveries by A {by_a:?} and B {by_b:?}"
        );
        let rows = events(&documents);
        let deliveries: Vec<u32> = rows.iter().map(|row| row.deliveries).collect();
        assert_eq!(deliveries, vec![1; 12], "claims of each event");
        assert!(rows.iter().all(|row| row.state == EventState::Delivered));
        assert_eq!(rig.conversions().len(), 12, "conversions");
        assert_eq!(rig.answered(), 12, "deliveries that reached the consumer");
    });
}

/// A dispatcher whose claim was taken over cannot settle the event any more: the takeover's
/// token is higher, every settling write names its token, and the outbox refuses the old one,
/// before and after the new owner settles.
pub fn stale_dispatcher_cannot_settle_after_takeover(subject: &OutboxUnderTest) {
    run(|| async {
        let rig = OutboxRig::start(subject).await;
        let a = rig.documents(Clock::system(), LedgerHooks::none());
        a.accept(&key(1), &job(1)).expect("accepted");
        let b = rig.documents(Clock::ahead(AHEAD), LedgerHooks::none());

        let held_by_a = a.claim("dispatcher-a", LEASE, 8).expect("A claims");
        assert_eq!(held_by_a.len(), 1, "A's claim");
        assert!(
            a.claim("dispatcher-a2", LEASE, 8)
                .expect("a second claim")
                .is_empty(),
            "a live claim is not claimed again"
        );
        let held_by_b = b.claim("dispatcher-b", LEASE, 8).expect("B takes over");
        assert_eq!(held_by_b.len(), 1, "B's takeover of a lapsed claim");
        assert!(
            held_by_b[0].token > held_by_a[0].token,
            "the takeover's token {} is higher than {}",
            held_by_b[0].token,
            held_by_a[0].token
        );

        let wait = Duration::from_millis(10);
        assert!(!a.postpone(&held_by_a[0], "late", wait).expect("postpone"));
        assert!(b.mark_delivered(&held_by_b[0], Some(1)).expect("B settles"));
        assert!(!a.mark_delivered(&held_by_a[0], Some(99)).expect("A marks"));
        assert!(!a.mark_rejected(&held_by_a[0], "late").expect("A rejects"));

        let row = &events(&a)[0];
        assert_eq!(
            (
                row.state,
                row.conversion,
                row.owner.as_deref(),
                row.token,
                row.deliveries
            ),
            (
                EventState::Delivered,
                Some(1),
                Some("dispatcher-b"),
                Some(held_by_b[0].token),
                2
            ),
            "the event after the stale owner's writes"
        );
    });
}

/// `reply` is a replay of `first`: a 200 with the same body, marked `Idempotent-Replayed`.
#[track_caller]
fn assert_replay(reply: &LoopbackReply, first: &LoopbackReply) {
    assert_eq!(
        (reply.status, reply.body.as_str(), reply.replayed()),
        (200, first.body.as_str(), true),
        "a redelivery's (status, body, replayed)"
    );
}

fn serde_json_body(event: &str) -> String {
    let request = ConversionRequest {
        event: event.to_owned(),
        job: "report.docx".to_owned(),
        units: 3,
    };
    serde_json::to_string(&request).expect("a conversion request serializes")
}
