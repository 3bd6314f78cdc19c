//! The checks themselves, one function per behaviour, each opened by the requirement it checks.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::SeqCst;
use std::time::Duration;

use retrykey_foreign::Completed;
use retrykey_foreign::crash::{Hooks, Point};
use retrykey_foreign::provider::ChargeFault;
use retrykey_foreign::{Order, foreign_key};
use retrykey_http::{EntryId, IdempotencyKey, Scope};

use crate::ForeignUnderTest;
use crate::rig::{CheckoutRig, LEASE, post, run};

/// The answer of a paid operation.
fn paid(order: i64, charge: i64) -> String {
    format!(r#"{{"charge":{charge},"order":{order},"status":"paid"}}"#)
}

/// The key the charge of the operation under `key` must carry.
fn derived(key: &str) -> String {
    let key = IdempotencyKey::parse(key.as_bytes()).expect("a valid key");
    let operation = EntryId::new(&Scope::Anonymous, &key);
    foreign_key(&operation, "charge").as_str().to_owned()
}

/// Asserts one order per amount, each in `status`, with a shipment exactly when it is paid.
fn assert_orders(orders: &[Order], amounts: &[i64], status: &str, context: &str) {
    let found: Vec<_> = (orders.iter())
        .map(|order| (order.amount, order.status.as_str(), order.shipments))
        .collect();
    let shipped = i64::from(status == "paid");
    let wanted: Vec<_> = (amounts.iter())
        .map(|amount| (*amount, status, shipped))
        .collect();
    assert_eq!(
        found, wanted,
        "{context}: one order per operation, each {status}, shipped once if paid"
    );
}

/// A hook that holds the checkout at `point` for `pause`, on a worker the runtime can spare.
fn pause_at(point: Point, pause: Duration) -> Hooks {
    Hooks::with(move |at| {
        if at == point {
            tokio::task::block_in_place(|| std::thread::sleep(pause));
        }
    })
}

/// With nothing in the way, a checkout is one order, paid and shipped once, and one charge at
/// the provider under the key derived from the operation's; the same key again replays the
/// answer and changes nothing.
pub fn one_order_one_charge_one_shipment(subject: &ForeignUnderTest) {
    run(|| async {
        let rig = CheckoutRig::start(subject, Hooks::none()).await;
        assert_eq!(rig.post("cart-1", 500).await, (201, false, paid(1, 1)));
        assert_eq!(rig.post("cart-1", 500).await, (201, true, paid(1, 1)));
        let charges = rig.charges().await;
        let keys: Vec<_> = charges.iter().map(|charge| charge.key.clone()).collect();
        assert_eq!(
            keys,
            [derived("cart-1")],
            "one charge, under the derived key"
        );
        assert_orders(&rig.orders().await, &[500], "paid", "no fault");
        rig.stop().await;
    });
}

/// A fault of the provider that the call's own retries outlast (the reply lost, a 5xx before
/// or after charging, an answer later than one attempt's timeout) costs nothing: the retries
/// carry the same key, and each operation is charged once.
pub fn transient_faults_charge_once(subject: &ForeignUnderTest) {
    run(|| async {
        let rig = CheckoutRig::start(subject, Hooks::none()).await;
        let faults = [
            ChargeFault::ReplyLost,
            ChargeFault::ErrorBefore,
            ChargeFault::ErrorAfter,
            ChargeFault::Slow(Duration::from_millis(1500)),
        ];
        for (n, fault) in faults.into_iter().enumerate() {
            rig.provider.faults().push(fault, 1);
            let (status, replayed, _) = rig.post(&format!("cart-fault-{n}"), 300).await;
            assert_eq!((status, replayed), (201, false), "{fault:?}");
        }
        assert_eq!(rig.charges().await.len(), 4, "one charge per operation");
        assert_orders(&rig.orders().await, &[300; 4], "paid", "transient faults");
        rig.stop().await;
    });
}

/// When the provider fails every attempt of the call, the checkout cannot know whether the card
/// was charged: it answers 503 and keeps its recovery point, never guessing. The retry resumes
/// there and asks the provider again under the same key: one order, one charge.
pub fn unknown_charge_is_asked_again(subject: &ForeignUnderTest) {
    run(|| async {
        let rig = CheckoutRig::start(subject, Hooks::none()).await;
        rig.provider.faults().push(ChargeFault::ErrorBefore, 100);
        let (status, _, body) = rig.post("cart-down", 800).await;
        assert_eq!(status, 503, "an unknown charge is not answered: {body}");
        assert_orders(&rig.orders().await, &[800], "pending", "while unknown");
        rig.provider.faults().clear();
        assert_eq!(rig.post("cart-down", 800).await, (201, false, paid(1, 1)));
        assert_eq!(rig.charges().await.len(), 1, "one charge");
        assert_orders(&rig.orders().await, &[800], "paid", "after the retry");
        rig.stop().await;
    });
}

/// An operation belongs to the request that began it. Once its key is free again (the charge
/// unknown, a 503), another request under the key is refused with 422 and changes nothing, and
/// the first request's retry still resumes its operation: one order, one charge, its amount.
pub fn another_request_cannot_resume_the_operation(subject: &ForeignUnderTest) {
    run(|| async {
        let rig = CheckoutRig::start(subject, Hooks::none()).await;
        rig.provider.faults().push(ChargeFault::ErrorBefore, 100);
        let (status, _, body) = rig.post("cart-mixed", 800).await;
        assert_eq!(status, 503, "an unknown charge is not answered: {body}");
        rig.provider.faults().clear();
        let (status, _, body) = rig.post("cart-mixed", 900).await;
        assert_eq!(status, 422, "another body under the key: {body}");
        assert!(
            rig.charges().await.is_empty(),
            "the other request charged nothing"
        );
        assert_orders(
            &rig.orders().await,
            &[800],
            "pending",
            "after the other request",
        );
        assert_eq!(rig.post("cart-mixed", 800).await, (201, false, paid(1, 1)));
        assert_eq!(rig.charges().await.len(), 1, "one charge");
        assert_orders(&rig.orders().await, &[800], "paid", "after the retry");
        rig.stop().await;
    });
}

/// When the provider charges but answers after every deadline of the call, the retry asks again
/// under the same key and the provider answers from its record: one charge, however many
/// attempts were made.
pub fn late_charge_is_found_by_the_retry(subject: &ForeignUnderTest) {
    run(|| async {
        let rig = CheckoutRig::start(subject, Hooks::none()).await;
        let late = ChargeFault::Slow(Duration::from_secs(3));
        rig.provider.faults().push(late, 100);
        let (status, _, body) = rig.post("cart-slow", 400).await;
        assert_eq!(status, 503, "{body}");
        assert_eq!(rig.charges().await.len(), 1, "the provider charged at once");
        rig.provider.faults().clear();
        assert_eq!(rig.post("cart-slow", 400).await, (201, false, paid(1, 1)));
        assert_eq!(rig.charges().await.len(), 1, "and only once");
        assert_orders(&rig.orders().await, &[400], "paid", "late charge");
        rig.stop().await;
    });
}

/// A declined card ends the operation: the order declined, nothing charged or shipped, and the
/// 402 kept for the key.
pub fn declined_card_is_kept(subject: &ForeignUnderTest) {
    run(|| async {
        let rig = CheckoutRig::start(subject, Hooks::none()).await;
        rig.provider.faults().push(ChargeFault::Declined, 1);
        let declined = r#"{"order":1,"provider":402,"status":"declined"}"#.to_owned();
        assert_eq!(
            rig.post("cart-no", 250).await,
            (402, false, declined.clone())
        );
        assert_eq!(rig.post("cart-no", 250).await, (402, true, declined));
        assert!(rig.charges().await.is_empty(), "nothing charged");
        assert_orders(&rig.orders().await, &[250], "declined", "declined card");
        rig.stop().await;
    });
}

/// A crash at each point of the path (a panic there: the open transaction never commits, the
/// layer releases the key) costs nothing: the client's retry resumes from the last recovery
/// point that committed, under the same derived key. One order, paid and shipped once, one
/// charge, wherever the crash fell.
pub fn crash_at_every_point_ends_once(subject: &ForeignUnderTest) {
    run(|| async {
        for point in Point::ALL {
            let crashed = Arc::new(AtomicBool::new(false));
            let once = Arc::clone(&crashed);
            let hooks = Hooks::with(move |at| {
                if at == point && !once.swap(true, SeqCst) {
                    panic!("the checkout crashes at {at}");
                }
            });
            let rig = CheckoutRig::start(subject, hooks).await;
            let (status, _, _) = rig.post("cart-crash", 600).await;
            assert!(crashed.load(SeqCst), "{point}: never reached");
            assert_ne!(status, 201, "{point}: the crash cost the answer");
            // Once the last phase committed, the answer is stored and the retry replays it;
            // before, the retry resumes and finishes the operation itself.
            let retry = rig.post("cart-crash", 600).await;
            let replayed = point == Point::Confirmed;
            assert_eq!(retry, (201, replayed, paid(1, 1)), "{point}");
            assert_eq!(rig.charges().await.len(), 1, "{point}: one charge");
            assert_orders(&rig.orders().await, &[600], "paid", &point.to_string());
            rig.stop().await;
        }
    });
}

/// A replica that pauses after the provider answered, past its lease, changes nothing when it
/// wakes: another replica takes the key over for the client's retry, resumes, asks the provider
/// again under the same key and confirms; the paused one's phase is then refused by the fence.
pub fn paused_replica_is_fenced_out(subject: &ForeignUnderTest) {
    run(|| async {
        let rig = CheckoutRig::start(subject, pause_at(Point::Called, 3 * LEASE)).await;
        let (other, other_server) = rig.replica(Duration::from_secs(60)).await;
        let first = tokio::spawn({
            let client = rig.client();
            async move { post(&client, "cart-pause", 900).await }
        });
        let charged = || async { !rig.charges().await.is_empty() };
        retrykey_testkit::wait_until("the first charge", Duration::from_secs(20), charged).await;
        let retry = post(&other, "cart-pause", 900).await;
        assert_eq!((retry.status, retry.body), (201, paid(1, 1)));
        let first = first.await.expect("the paused replica's request");
        assert_eq!(
            first.status, 503,
            "the paused replica is fenced out: {first:?}"
        );
        assert_eq!(rig.charges().await.len(), 1, "one charge");
        assert_orders(&rig.orders().await, &[900], "paid", "after the takeover");
        other_server.stop().await;
        rig.stop().await;
    });
}

/// An operation whose client left at a recovery point is finished by the completer: it claims
/// the operation's key, resumes under the same derived key, releases the key while the charge
/// stays unknown, and once it is known confirms it; the client's late retry replays the
/// completer's answer.
pub fn completer_finishes_what_a_client_left(subject: &ForeignUnderTest) {
    run(|| async {
        let rig = CheckoutRig::start(subject, Hooks::none()).await;
        rig.provider.faults().push(ChargeFault::ErrorBefore, 100);
        assert_eq!(rig.post("cart-left", 350).await.0, 503);
        let complete = || rig.checkout.complete(Duration::ZERO, 10);
        let unknown = Completed {
            unknown: 1,
            ..Completed::default()
        };
        assert_eq!(complete().await.expect("a run"), unknown, "still unknown");
        assert!(rig.charges().await.is_empty());
        rig.provider.faults().clear();
        let finished = Completed {
            finished: 1,
            ..Completed::default()
        };
        assert_eq!(complete().await.expect("a run"), finished);
        assert_eq!(rig.charges().await.len(), 1, "one charge");
        let late = rig.post("cart-left", 350).await;
        assert_eq!(
            late,
            (201, true, paid(1, 1)),
            "the late retry replays the completer's"
        );
        assert_eq!(complete().await.expect("a run"), Completed::default());
        assert_eq!(rig.charges().await.len(), 1, "still one charge");
        assert_orders(&rig.orders().await, &[350], "paid", "completed");
        rig.stop().await;
    });
}

/// An operation whose key an attempt holds is left to that attempt: the completer never drives
/// an operation beside it, so the order is confirmed and shipped once.
pub fn completer_leaves_a_running_attempt_alone(subject: &ForeignUnderTest) {
    run(|| async {
        let rig = CheckoutRig::start(
            subject,
            pause_at(Point::Called, Duration::from_millis(1500)),
        )
        .await;
        let running = tokio::spawn({
            let client = rig.client();
            async move { post(&client, "cart-busy", 120).await }
        });
        let charged = || async { !rig.charges().await.is_empty() };
        retrykey_testkit::wait_until("the charge", Duration::from_secs(20), charged).await;
        let run = rig.checkout.complete(Duration::ZERO, 10).await;
        let running_one = Completed {
            running: 1,
            ..Completed::default()
        };
        let answered = running.await.expect("the request");
        assert_eq!((answered.status, answered.body), (201, paid(1, 1)));
        assert_eq!(rig.charges().await.len(), 1, "one charge");
        assert_orders(
            &rig.orders().await,
            &[120],
            "paid",
            "completer beside an attempt",
        );
        assert_eq!(run.expect("a run"), running_one, "the completer left it");
        rig.stop().await;
    });
}

/// The reaper removes the rows of operations finished past retention, and nothing else: not an
/// unfinished operation's row (the completer still finishes it), not an order.
pub fn reaper_removes_only_finished_operations(subject: &ForeignUnderTest) {
    run(|| async {
        let rig = CheckoutRig::start(subject, Hooks::none()).await;
        assert_eq!(rig.post("cart-old", 100).await.0, 201);
        rig.provider.faults().push(ChargeFault::ErrorBefore, 100);
        assert_eq!(rig.post("cart-open", 100).await.0, 503);
        rig.provider.faults().clear();
        let reap = |retention| rig.checkout.reap(retention, 10);
        assert_eq!(reap(Duration::from_secs(3600)).await.ok(), Some(0));
        assert_eq!(reap(Duration::ZERO).await.ok(), Some(1));
        assert_eq!(reap(Duration::ZERO).await.ok(), Some(0));
        let run = rig.checkout.complete(Duration::ZERO, 10).await;
        assert_eq!(
            run.expect("a run").finished,
            1,
            "the open one is still there"
        );
        assert_orders(&rig.orders().await, &[100, 100], "paid", "after the reaper");
        rig.stop().await;
    });
}
