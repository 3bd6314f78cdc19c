//! The executor's tracing events: one per attempt start and end and one per decision, in order,
//! at DEBUG for attempts and INFO or WARN for decisions, naming the key by its digest only.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use retrykey::{Request, Store};
use retrykey_client::adapters::MemoryAdapter;
use retrykey_client::fields::{self, KeyDigest};
use retrykey_client::{
    Client, Failure, Key, Outcome, Policy, RetryQuota, StatusFailure, Stop, Success,
};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// One event as the subscriber saw it: level, target and every field's value as text.
#[derive(Clone, Debug)]
struct Seen {
    level: Level,
    target: String,
    fields: BTreeMap<String, String>,
}

impl Seen {
    fn get(&self, name: &str) -> &str {
        self.fields.get(name).map_or("", String::as_str)
    }
}

/// The events of one test's thread.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Seen>>>);

impl Capture {
    fn events(&self) -> Vec<Seen> {
        self.0.lock().unwrap().clone()
    }
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

thread_local! {
    /// The capture of the test running on this thread (its runtime has this one thread).
    static CURRENT: std::cell::RefCell<Option<Capture>> = const { std::cell::RefCell::new(None) };
}

/// The test program's one subscriber, handing each event to its thread's capture. Global, not
/// scoped per test: tracing caches whether a callsite is wanted, and a callsite first reached
/// while another test's scoped subscriber comes or goes can be cached as unwanted.
struct Router;

impl Subscriber for Router {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let Some(capture) = CURRENT.with(|current| current.borrow().clone()) else {
            return;
        };
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        capture.0.lock().unwrap().push(Seen {
            level: *event.metadata().level(),
            target: event.metadata().target().to_owned(),
            fields,
        });
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// Runs `run` with this thread's events captured, and returns them.
async fn capture<F: std::future::Future>(run: F) -> (F::Output, Vec<Seen>) {
    static ROUTER: std::sync::Once = std::sync::Once::new();
    ROUTER.call_once(|| {
        tracing::subscriber::set_global_default(Router)
            .expect("no other test of the program sets a global subscriber");
    });
    let capture = Capture::default();
    CURRENT.with(|current| *current.borrow_mut() = Some(capture.clone()));
    let output = run.await;
    CURRENT.with(|current| *current.borrow_mut() = None);
    (output, capture.events())
}

/// What each event says, in order: its level, then `message` and the decision or outcome.
fn story(events: &[Seen]) -> Vec<(Level, String)> {
    events
        .iter()
        .map(|e| {
            let what = match e.get("message") {
                "attempt started" => format!("attempt {} started", e.get(fields::ATTEMPT)),
                "attempt ended" => format!(
                    "attempt {} {}",
                    e.get(fields::ATTEMPT),
                    e.get(fields::OUTCOME)
                ),
                _ => format!("decision {}", e.get(fields::DECISION)),
            };
            (e.level, what)
        })
        .collect()
}

/// The key appears in no event, not even in part of a field; every event names it by digest.
fn assert_key_only_as_digest(events: &[Seen], key: &Key) {
    let digest = KeyDigest::of(key).to_string();
    for event in events {
        assert_eq!(event.target, "retrykey_client::executor");
        assert_ne!(
            event.level,
            Level::ERROR,
            "an expected outcome logged as ERROR: {event:?}"
        );
        assert_eq!(event.get(fields::KEY_DIGEST), digest, "{event:?}");
        for (name, value) in &event.fields {
            assert!(
                !value.contains(key.as_str()) && !name.contains(key.as_str()),
                "the key's text is in {name} of {event:?}"
            );
        }
    }
}

// Attempts are DEBUG, the retry and the success INFO, in order, the key only as its digest.
#[tokio::test(start_paused = true)]
async fn retry_then_success_in_order() {
    let store = Arc::new(Store::new());
    let ledger = MemoryAdapter::new(store.clone());
    ledger.lose_next_replies(1);
    let client = Client::builder(Policy::default()).seed(51).build();
    let key = Key::new("payment-2024-0051-alice").unwrap();
    let request = Request::new("convert-document", 3).unwrap();
    let (outcome, events) =
        capture(client.run_with_key(key.clone(), |a| ledger.apply(a, &request))).await;
    assert_eq!(outcome.kind(), "succeeded");
    assert_eq!(
        story(&events),
        [
            (Level::DEBUG, "attempt 1 started".to_owned()),
            (Level::DEBUG, "attempt 1 lost".to_owned()),
            (Level::INFO, "decision retry".to_owned()),
            (Level::DEBUG, "attempt 2 started".to_owned()),
            (Level::DEBUG, "attempt 2 replayed".to_owned()),
            (Level::INFO, "decision succeeded".to_owned()),
        ]
    );
    assert!(
        events[2].get(fields::DELAY_MS).parse::<u64>().is_ok(),
        "{:?}",
        events[2]
    );
    assert_eq!(events[5].get(fields::REPLAYED), "true");
    assert_key_only_as_digest(&events, &key);
}

// A rejection is one WARN with its status, and the service's text (echoing the key) stays out.
#[tokio::test(start_paused = true)]
async fn rejection_is_one_warning() {
    let client = Client::builder(Policy::default()).seed(52).build();
    let key = Key::new("refund-52-bob").unwrap();
    let detail = format!("key {} was used for another refund", key.as_str());
    let (outcome, events) = capture(client.run_with_key(key.clone(), |_| {
        let answer = StatusFailure::new(409, detail.clone());
        async move { Err::<Success<()>, _>(Failure::Status(answer)) }
    }))
    .await;
    assert_eq!(outcome.kind(), "rejected");
    assert_eq!(
        story(&events),
        [
            (Level::DEBUG, "attempt 1 started".to_owned()),
            (Level::DEBUG, "attempt 1 status".to_owned()),
            (Level::WARN, "decision rejected".to_owned()),
        ]
    );
    assert_eq!(events[2].get(fields::STATUS), "409");
    assert_key_only_as_digest(&events, &key);
}

// An empty retry quota ends the operation with one WARN: unknown, quota_exhausted.
#[tokio::test(start_paused = true)]
async fn quota_empty_is_an_unknown_warning() {
    let client = Client::builder(Policy::default())
        .quota(Arc::new(RetryQuota::new(0, 5, 10, 1)))
        .seed(53)
        .build();
    let key = Key::new("transfer-53-carol").unwrap();
    let (outcome, events) = capture(client.run_with_key(key.clone(), |_| async {
        Err::<Success<()>, _>(Failure::Lost("reset by peer".into()))
    }))
    .await;
    assert!(
        matches!(outcome, Outcome::Unknown { attempts: 1, .. }),
        "{outcome:?}"
    );
    assert_eq!(
        story(&events),
        [
            (Level::DEBUG, "attempt 1 started".to_owned()),
            (Level::DEBUG, "attempt 1 lost".to_owned()),
            (Level::WARN, "decision unknown".to_owned()),
        ]
    );
    assert_eq!(events[2].get(fields::STOP), "quota_exhausted");
    assert_eq!(events[2].get(fields::MAY_HAVE_APPLIED), "true");
    assert_key_only_as_digest(&events, &key);
}

// A spent budget ends the operation with one WARN, after one INFO per retry made.
#[tokio::test(start_paused = true)]
async fn budget_spent_is_an_unknown_warning() {
    let policy = Policy::builder()
        .max_attempts(10)
        .base(Duration::from_millis(100))
        .cap(Duration::from_millis(100))
        .budget(Duration::from_millis(250))
        .attempt_timeout(Duration::from_millis(100))
        .build()
        .unwrap();
    let client = Client::builder(policy).seed(54).build();
    let key = Key::new("order-54-dave").unwrap();
    // Each attempt hangs until its timeout: 100 ms each, so the budget runs out.
    let (outcome, events) = capture(client.run_with_key(key.clone(), |_| {
        std::future::pending::<Result<Success<()>, Failure>>()
    }))
    .await;
    let Outcome::Unknown { stop, attempts, .. } = outcome else {
        panic!("{outcome:?}")
    };
    let last = events.last().unwrap();
    assert_eq!(
        (last.level, last.get(fields::DECISION)),
        (Level::WARN, "unknown")
    );
    assert_eq!(stop, Stop::BudgetExhausted);
    assert_eq!(last.get(fields::STOP), "budget_exhausted");
    let retries = events
        .iter()
        .filter(|e| e.get(fields::DECISION) == "retry")
        .count();
    assert_eq!(u32::try_from(retries).unwrap(), attempts - 1);
    let timed_out = events
        .iter()
        .filter(|e| e.get(fields::OUTCOME) == "timed_out")
        .count();
    assert_eq!(u32::try_from(timed_out).unwrap(), attempts);
    assert_key_only_as_digest(&events, &key);
}
