//! The checkout in atomic phases against the provider, on real loopback sockets: each
//! operation is one order and at most one charge, whatever the provider does to the call in the
//! middle, and a retry resumes from the last recovery point under the same derived key.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::SeqCst;
use std::time::Duration;

use retrykey_foreign::checkout::{CHECKOUTS, Checkout, ProviderCall};
use retrykey_foreign::crash::{Hooks, Point};
use retrykey_foreign::foreign_key;
use retrykey_foreign::provider::{Charge, Fault, Provider};
use retrykey_http::{EntryId, IdempotencyKey, Scope};
use retrykey_program::Clock;
use retrykey_replicas::Lease;
use retrykey_replicas::{SqliteEntries, StoreOptions};
use retrykey_server::loopback::{LoopbackClient, Server};

/// A provider and a checkout, each on its own throwaway file and socket.
struct Rig {
    provider: Provider,
    provider_server: Server,
    checkout: LoopbackClient,
    checkout_server: Server,
    /// The checkout itself, for its completer and reaper.
    shared: Arc<Checkout>,
    store: SqliteEntries,
}

impl Rig {
    async fn start() -> Self {
        Self::with_hooks(Hooks::none()).await
    }

    /// A rig whose checkout runs `hooks` at its crash points; its keys' lease is one second.
    async fn with_hooks(hooks: Hooks) -> Self {
        let provider_store = SqliteEntries::throwaway(StoreOptions::default()).expect("a store");
        let provider = Provider::open(provider_store).await.expect("the provider");
        let provider_server = Server::start(provider.clone().service())
            .await
            .expect("a server");
        let store = SqliteEntries::throwaway(short_lease(Clock::system())).expect("a store");
        let checkout = Checkout::open(store.clone(), ProviderCall::to(provider_server.url()))
            .await
            .expect("the checkout")
            .with_hooks(hooks);
        let shared = Arc::new(checkout);
        let checkout_server = Server::start(Arc::clone(&shared).service())
            .await
            .expect("a server");
        Self {
            provider,
            provider_server,
            checkout: LoopbackClient::new(checkout_server.url()),
            checkout_server,
            shared,
            store,
        }
    }

    /// One `POST /checkouts` under `key`: its status, whether it was a replay, its body.
    async fn post(&self, key: &str, amount: i64) -> (u16, bool, String) {
        let body = format!(r#"{{"amount":{amount}}}"#);
        let reply = self
            .checkout
            .post(CHECKOUTS, &[("idempotency-key", key)], body)
            .await
            .expect("the checkout answers");
        (reply.status, reply.replayed(), reply.body)
    }

    /// The provider's charges under `key`'s derived key.
    async fn charges(&self, key: &str) -> Vec<Charge> {
        let key = IdempotencyKey::parse(key.as_bytes()).expect("a valid key");
        let derived = foreign_key(&EntryId::new(&Scope::Anonymous, &key), "charge");
        let all = self.provider.charges().await.expect("the charges");
        all.into_iter()
            .filter(|charge| charge.key == derived.as_str())
            .collect()
    }

    /// The checkout's orders, as `GET /orders` lists them.
    async fn orders(&self) -> serde_json::Value {
        let reply = self.checkout.get("/orders", &[]).await.expect("the orders");
        serde_json::from_str(&reply.body).expect("a JSON list")
    }

    async fn stop(self) {
        self.checkout_server.stop().await;
        self.provider_server.stop().await;
        drop(self.store);
    }
}

/// A one-second lease, read on `clock`.
fn short_lease(clock: Clock) -> StoreOptions {
    StoreOptions {
        lease: Lease {
            duration: Duration::from_secs(1),
            ..Lease::default()
        },
        clock,
        ..StoreOptions::default()
    }
}

fn paid(order: i64, charge: i64) -> String {
    format!(r#"{{"charge":{charge},"order":{order},"status":"paid"}}"#)
}

// With nothing in the way: one order, paid, one charge under the derived key; the same key
// again replays the answer and changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkout_is_one_order_and_one_charge() {
    let rig = Rig::start().await;
    assert_eq!(rig.post("cart-1", 500).await, (201, false, paid(1, 1)));
    assert_eq!(rig.post("cart-1", 500).await, (201, true, paid(1, 1)));
    assert_eq!(rig.charges("cart-1").await.len(), 1);
    let orders = rig.orders().await;
    assert_eq!(orders["orders"][0]["status"], "paid", "{orders}");
    assert_eq!(
        orders["orders"].as_array().map(Vec::len),
        Some(1),
        "{orders}"
    );
    rig.stop().await;
}

// The provider's answer is lost, or late, or a 503 before or after the charge: the checkout's
// own retries, under the derived key, charge once and the client never knows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transient_provider_fault_is_absorbed_by_the_same_key() {
    let rig = Rig::start().await;
    let faults = [
        Fault::ReplyLost,
        Fault::ErrorBefore,
        Fault::ErrorAfter,
        Fault::Slow(Duration::from_millis(1500)),
    ];
    for (n, fault) in faults.into_iter().enumerate() {
        let key = format!("cart-fault-{n}");
        rig.provider.faults().push(fault, 1);
        let (status, replayed, _) = rig.post(&key, 300).await;
        assert_eq!((status, replayed), (201, false), "{fault:?}");
        assert_eq!(rig.charges(&key).await.len(), 1, "{fault:?}");
    }
    let orders = rig.orders().await;
    assert_eq!(
        orders["orders"].as_array().map(Vec::len),
        Some(4),
        "{orders}"
    );
    rig.stop().await;
}

// The provider fails every attempt of the call: the checkout cannot know whether the card was
// charged, so it answers 503 and keeps its recovery point. The client's retry resumes there,
// under the same derived key: still one order, and one charge, made by the retry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_charge_is_asked_again_not_guessed() {
    let rig = Rig::start().await;
    rig.provider.faults().push(Fault::ErrorBefore, 100);
    let (status, _, body) = rig.post("cart-down", 800).await;
    assert_eq!(status, 503, "{body}");
    assert!(rig.charges("cart-down").await.is_empty());
    rig.provider.faults().clear();
    assert_eq!(rig.post("cart-down", 800).await, (201, false, paid(1, 1)));
    assert_eq!(rig.charges("cart-down").await.len(), 1);
    let orders = rig.orders().await;
    assert_eq!(
        orders["orders"].as_array().map(Vec::len),
        Some(1),
        "{orders}"
    );
    rig.stop().await;
}

// The provider charges, and its answer comes after every deadline of the call: the checkout
// answers 503; the retry calls again with the same key and the provider answers from its
// record. One charge, however many attempts the call made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_charge_answered_too_late_is_found_by_the_retry() {
    let rig = Rig::start().await;
    rig.provider
        .faults()
        .push(Fault::Slow(Duration::from_secs(3)), 100);
    let (status, _, body) = rig.post("cart-slow", 400).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(
        rig.charges("cart-slow").await.len(),
        1,
        "the provider charged the first time"
    );
    rig.provider.faults().clear();
    assert_eq!(rig.post("cart-slow", 400).await, (201, false, paid(1, 1)));
    assert_eq!(rig.charges("cart-slow").await.len(), 1);
    rig.stop().await;
}

// A declined card ends the operation: the order is declined, nothing is charged, and the 402
// is kept for the key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_card_is_recorded_and_replayed() {
    let rig = Rig::start().await;
    rig.provider.faults().push(Fault::Declined, 1);
    let declined = r#"{"order":1,"provider":402,"status":"declined"}"#.to_owned();
    assert_eq!(
        rig.post("cart-no", 250).await,
        (402, false, declined.clone())
    );
    assert_eq!(rig.post("cart-no", 250).await, (402, true, declined));
    assert!(rig.charges("cart-no").await.is_empty());
    let orders = rig.orders().await;
    assert_eq!(orders["orders"][0]["status"], "declined", "{orders}");
    rig.stop().await;
}

// A crash at each point of the path (a panic there: the open transaction never commits, and
// the layer releases the key): the client's retry resumes from the last recovery point that
// committed, under the same derived key. One order, one charge, wherever the crash fell.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_at_every_point_leaves_one_order_and_one_charge() {
    for point in Point::ALL {
        let crashed = Arc::new(AtomicBool::new(false));
        let once = Arc::clone(&crashed);
        let hooks = Hooks::with(move |at| {
            if at == point && !once.swap(true, SeqCst) {
                panic!("the checkout crashes at {at}");
            }
        });
        let rig = Rig::with_hooks(hooks).await;
        let (crashed_status, _, _) = rig.post("cart-crash", 600).await;
        assert!(crashed.load(SeqCst), "{point}: never reached");
        assert_ne!(crashed_status, 201, "{point}: the crash cost the answer");
        // Once the last phase committed, the answer is stored: the retry replays it. Before,
        // the retry resumes and finishes the operation itself.
        let retry = rig.post("cart-crash", 600).await;
        assert_eq!(
            retry,
            (201, point == Point::Confirmed, paid(1, 1)),
            "{point}"
        );
        assert_eq!(rig.charges("cart-crash").await.len(), 1, "{point}");
        let orders = rig.orders().await;
        assert_eq!(
            orders["orders"].as_array().map(Vec::len),
            Some(1),
            "{point}: {orders}"
        );
        assert_eq!(orders["orders"][0]["status"], "paid", "{point}: {orders}");
        rig.stop().await;
    }
}

// Replica A pauses right after the provider answered, past its lease; replica B, on the same
// file, takes the key over for the client's retry, resumes from `order_created`, asks the
// provider again under the same key (its record answers) and confirms. When A wakes, its phase
// is refused by the fence: one order, one charge, one answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_paused_replica_past_its_lease_changes_nothing() {
    let paused = Hooks::with(|at| {
        if at == Point::Called {
            std::thread::sleep(Duration::from_secs(3));
        }
    });
    let rig = Rig::with_hooks(paused).await;
    let ahead = SqliteEntries::open(
        rig.store.path(),
        short_lease(Clock::ahead(Duration::from_secs(60))),
    )
    .expect("replica B's store, same file");
    let b = Checkout::open(ahead, ProviderCall::to(rig.provider_server.url()))
        .await
        .expect("replica B");
    let b_server = Server::start(Arc::new(b).service())
        .await
        .expect("a server");
    let b_client = LoopbackClient::new(b_server.url());

    let first = tokio::spawn({
        let client = rig.checkout.clone();
        async move {
            client
                .post(
                    CHECKOUTS,
                    &[("idempotency-key", "cart-pause")],
                    r#"{"amount":900}"#,
                )
                .await
                .expect("replica A answers")
        }
    });
    // A has called the provider once it holds the charge.
    retrykey_testkit::wait_until("A's charge is made", Duration::from_secs(60), || async {
        !rig.charges("cart-pause").await.is_empty()
    })
    .await;
    let retry = b_client
        .post(
            CHECKOUTS,
            &[("idempotency-key", "cart-pause")],
            r#"{"amount":900}"#,
        )
        .await
        .expect("replica B answers");
    assert_eq!(
        (retry.status, retry.body.clone()),
        (201, paid(1, 1)),
        "{retry:?}"
    );
    let first = first.await.expect("A's request");
    assert_eq!(first.status, 503, "A's late phase is fenced: {first:?}");
    assert_eq!(rig.charges("cart-pause").await.len(), 1);
    let orders = rig.orders().await;
    assert_eq!(
        orders["orders"].as_array().map(Vec::len),
        Some(1),
        "{orders}"
    );
    assert_eq!(orders["orders"][0]["status"], "paid", "{orders}");
    b_server.stop().await;
    rig.stop().await;
}

// The provider fails every attempt and the client gives up after the 503: the operation stays
// at `order_created`. The completer claims its key, resumes it under the same derived key and
// confirms it; the client's late retry then replays the completer's answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_completer_finishes_what_a_client_left() {
    use retrykey_foreign::checkout::Completed;
    let rig = Rig::start().await;
    rig.provider.faults().push(Fault::ErrorBefore, 100);
    let (status, _, _) = rig.post("cart-left", 350).await;
    assert_eq!(status, 503);
    // Still failing: the completer cannot know the charge either, and releases the key.
    let unknown = rig
        .shared
        .complete(Duration::ZERO, 10)
        .await
        .expect("a run");
    assert_eq!(
        unknown,
        Completed {
            unknown: 1,
            ..Completed::default()
        }
    );
    assert!(rig.charges("cart-left").await.is_empty());
    rig.provider.faults().clear();

    let done = rig
        .shared
        .complete(Duration::ZERO, 10)
        .await
        .expect("a run");
    assert_eq!(
        done,
        Completed {
            finished: 1,
            ..Completed::default()
        }
    );
    assert_eq!(rig.charges("cart-left").await.len(), 1);
    assert_eq!(rig.post("cart-left", 350).await, (201, true, paid(1, 1)));
    // Nothing is left to finish.
    let again = rig
        .shared
        .complete(Duration::ZERO, 10)
        .await
        .expect("a run");
    assert_eq!(again, Completed::default());
    assert_eq!(rig.charges("cart-left").await.len(), 1);
    rig.stop().await;
}

// An attempt that holds the key is left alone: the completer does not drive an operation twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_completer_leaves_a_running_attempt_alone() {
    use retrykey_foreign::checkout::Completed;
    let slow = Hooks::with(|at| {
        if at == Point::Called {
            std::thread::sleep(Duration::from_millis(1500));
        }
    });
    let rig = Rig::with_hooks(slow).await;
    let running = tokio::spawn({
        let client = rig.checkout.clone();
        async move {
            client
                .post(
                    CHECKOUTS,
                    &[("idempotency-key", "cart-busy")],
                    r#"{"amount":120}"#,
                )
                .await
                .expect("the checkout answers")
        }
    });
    retrykey_testkit::wait_until("the charge is made", Duration::from_secs(60), || async {
        !rig.charges("cart-busy").await.is_empty()
    })
    .await;
    let run = rig
        .shared
        .complete(Duration::ZERO, 10)
        .await
        .expect("a run");
    assert_eq!(
        run,
        Completed {
            running: 1,
            ..Completed::default()
        }
    );
    let answered = running.await.expect("the request");
    assert_eq!((answered.status, answered.body.clone()), (201, paid(1, 1)));
    assert_eq!(rig.charges("cart-busy").await.len(), 1);
    rig.stop().await;
}

// The reaper removes the rows of finished operations past retention, and nothing else: not an
// unfinished operation's row, not an order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reaper_removes_only_finished_operations() {
    let rig = Rig::start().await;
    assert_eq!(rig.post("cart-old", 100).await.0, 201);
    rig.provider.faults().push(Fault::ErrorBefore, 100);
    assert_eq!(rig.post("cart-open", 100).await.0, 503);
    rig.provider.faults().clear();
    assert_eq!(
        rig.shared.reap(Duration::from_secs(3600), 10).await.ok(),
        Some(0)
    );
    assert_eq!(rig.shared.reap(Duration::ZERO, 10).await.ok(), Some(1));
    assert_eq!(rig.shared.reap(Duration::ZERO, 10).await.ok(), Some(0));
    let orders = rig.orders().await;
    assert_eq!(
        orders["orders"].as_array().map(Vec::len),
        Some(2),
        "{orders}"
    );
    // The unfinished one is still there for the completer.
    let run = rig
        .shared
        .complete(Duration::ZERO, 10)
        .await
        .expect("a run");
    assert_eq!(run.finished, 1);
    rig.stop().await;
}
