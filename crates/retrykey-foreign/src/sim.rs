//! The simulator's `foreign` scenario: the checkout on host `server`, the provider on host
//! `provider`, the lab's clients, in stage 8's simulated network.
//!
//! Both hops lose answers: the checkout's to its clients and the provider's to the checkout,
//! each cut after it was given, by the plan's `reply_loss`. The provider also fails before
//! charging (the plan's `handler_failure`), answers later than the checkout's deadline now and
//! then, and declines some cards. A client that gives up leaves the checkout's attempt to run
//! on, and its next attempt resumes from the last recovery point. The provider records each
//! charge under the key it was called with, and the checkout records each call with the key of
//! the request it serves, so the history's judge counts the provider's charges per operation:
//! at most one, and exactly one for an operation whose client saw it paid.
//!
//! Everything is in memory ([`MemoryBooks`]) so that a seed replays exactly. For the same
//! reason each foreign key goes out under a name in the order it first went out (`foreign-1`,
//! `foreign-2`, ...): one name per key and one key per name, which the provider's contract
//! cannot tell from the keys themselves, and a key drawn at random (a variant's) still replays
//! byte for byte. The scenario runs no crash and no completer: those are the crash matrix's
//! and the checks' to show.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::post;
use http::{HeaderMap, StatusCode};
use rand::RngExt;
use retrykey::Key;
use retrykey_client::{Attempt, Failure, Policy, StandardSteps, TransportError};
use retrykey_http::{
    EntryId, IDEMPOTENCY_KEY, IdempotencyKey, IdempotencyLayer, MemoryEntries, Reservation, Scope,
    StoreLimits,
};
use retrykey_sim::{Cuts, FinishedRun, HistoryEvent, Plan, Scene, SimRng, rng, serve_cutting};

use crate::answers::json;
use crate::checkout::{CHECKOUTS, Steps};
use crate::provider::CHARGES;
use crate::{Checkout, MemoryBooks, ProviderCall, ProviderFuture, ProviderTransport};

/// The scenario's name on the simulator's command line.
pub const SCENARIO: &str = "foreign";

/// The checkout's deadline for one attempt of a charge here: short beside its clients'
/// patience, so that an unknown charge reaches a client while it still retries.
pub const DEADLINE: Duration = Duration::from_millis(150);

/// How long a slow provider takes to answer: past that deadline.
pub const SLOW: Duration = Duration::from_millis(300);

/// Amounts the provider declines: every multiple of this.
pub const DECLINED_EVERY: u64 = 17;

/// Runs seed `seed` of the scenario with the checkout's `steps` (the correct ones, or a lab's),
/// and judges its history.
pub fn run(steps: &'static dyn Steps, seed: u64) -> FinishedRun {
    let mut scene = Scene::new(seed, false);
    let plan = Arc::new(scene.plan.clone());
    let history = scene.history.clone();
    let at_provider = (history.clone(), Arc::clone(&plan));
    scene.host("provider", move || {
        let (history, plan) = at_provider.clone();
        provider(history, plan, seed)
    });
    scene.host("server", move || {
        checkout(history.clone(), Arc::clone(&plan), seed, steps)
    });
    scene.clients::<StandardSteps>(CHECKOUTS);
    scene.finish(SCENARIO)
}

/// The client's key of each operation the checkout serves, by its entry.
type Keys = Arc<Mutex<HashMap<EntryId, String>>>;

/// The name each foreign key goes out under, in the order of its first call.
#[derive(Clone, Default)]
struct Names(Arc<Mutex<HashMap<String, String>>>);

impl Names {
    fn of(&self, key: &str) -> String {
        let mut names = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let next = format!("foreign-{}", names.len() + 1);
        names.entry(key.to_owned()).or_insert(next).clone()
    }
}

/// The checkout host: the real checkout, its charges sent over the simulated network.
async fn checkout(
    history: retrykey_sim::History,
    plan: Arc<Plan>,
    seed: u64,
    steps: &'static dyn Steps,
) -> Result<(), Box<dyn std::error::Error>> {
    let keys = Keys::default();
    let transport = ToProvider {
        history: history.clone(),
        keys: Arc::clone(&keys),
        names: Names::default(),
    };
    let books = MemoryBooks::new(StoreLimits::default());
    let policy = Policy::builder()
        .max_attempts(2)
        .base(Duration::from_millis(10))
        .cap(Duration::from_millis(50))
        .budget(DEADLINE * 3)
        .attempt_timeout(DEADLINE)
        .build()?;
    let call = ProviderCall {
        url: "http://provider".to_owned(),
        policy,
    };
    let checkout = Checkout::new(books, call)
        .with_steps(steps)
        .with_transport(Arc::new(transport), rng(seed, 30).random());
    let noted = move |request: Request, next: Next| {
        note_key(&keys, request.headers());
        next.run(request)
    };
    let service = Arc::new(checkout)
        .service()
        .layer(middleware::from_fn(noted));
    let cuts = Cuts {
        host: "server",
        history,
        plan,
        draws: Arc::new(Mutex::new(rng(seed, 31))),
    };
    serve_cutting(cuts, service).await
}

/// Keeps the request's key by the entry the layer files it under (no caller scope: the
/// simulated clients send no credentials).
fn note_key(keys: &Keys, headers: &HeaderMap) {
    let Some(key) = headers.get(IDEMPOTENCY_KEY) else {
        return;
    };
    let Ok(parsed) = IdempotencyKey::parse(key.as_bytes()) else {
        return;
    };
    let text = String::from_utf8_lossy(key.as_bytes())
        .trim_matches('"')
        .to_owned();
    let entry = EntryId::new(&Scope::Anonymous, &parsed);
    (keys.lock().unwrap_or_else(PoisonError::into_inner)).insert(entry, text);
}

/// The checkout's way to the provider: each attempt recorded as a call for the operation the
/// attempt's reservation holds, then posted over the simulated network.
struct ToProvider {
    history: retrykey_sim::History,
    keys: Keys,
    names: Names,
}

impl ProviderTransport for ToProvider {
    fn post(&self, attempt: Attempt, body: Vec<u8>) -> ProviderFuture<'_> {
        let operation = Reservation::current().and_then(|reservation| {
            let keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
            keys.get(&reservation.id).cloned()
        });
        let name = self.names.of(attempt.key.as_str());
        let call = HistoryEvent::Called {
            key: operation.unwrap_or_default(),
            foreign: name.clone(),
        };
        self.history.record("server", call);
        let named = Key::new(name).map(|key| Attempt { key, ..attempt });
        Box::pin(async move {
            let attempt = named.map_err(|error| Failure::Refused(TransportError::other(error)))?;
            retrykey_sim::call("provider", CHARGES, &attempt, body).await
        })
    }
}

/// What the provider host's handler shares.
#[derive(Clone)]
struct Charging {
    history: retrykey_sim::History,
    plan: Arc<Plan>,
    draws: Arc<Mutex<SimRng>>,
    made: Arc<AtomicU64>,
}

/// The provider host: the lab's layer, in memory, in front of a handler that charges.
async fn provider(
    history: retrykey_sim::History,
    plan: Arc<Plan>,
    seed: u64,
) -> Result<(), Box<dyn std::error::Error>> {
    let draws = Arc::new(Mutex::new(rng(seed, 40)));
    let charging = Charging {
        history: history.clone(),
        plan: Arc::clone(&plan),
        draws: Arc::clone(&draws),
        made: Arc::default(),
    };
    let layer = IdempotencyLayer::builder()
        .store(MemoryEntries::new(StoreLimits::default()))
        .build();
    let service = Router::new()
        .route(CHARGES, post(charge))
        .with_state(charging)
        .layer(layer);
    let cuts = Cuts {
        host: "provider",
        history,
        plan,
        draws,
    };
    serve_cutting(cuts, service).await
}

/// One charge request: after its work, a 503 before charging, a declined card, or a charge.
async fn charge(State(charging): State<Charging>, headers: HeaderMap, body: Bytes) -> Response {
    let key = headers
        .get(IDEMPOTENCY_KEY)
        .map(|value| {
            String::from_utf8_lossy(value.as_bytes())
                .trim_matches('"')
                .to_owned()
        })
        .unwrap_or_default();
    let amount: u64 = serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|value| value["amount"].as_u64())
        .unwrap_or(0);
    let (fail, work) = {
        let mut draws = (charging.draws.lock()).unwrap_or_else(PoisonError::into_inner);
        let fail = draws.random_bool(charging.plan.handler_failure);
        let slow = draws.random_bool(charging.plan.reply_loss / 4.0);
        let most = charging.plan.max_work.as_millis() as u64;
        let work = Duration::from_millis(draws.random_range(0..=most));
        (fail, if slow { SLOW } else { work })
    };
    tokio::time::sleep(work).await;
    if fail {
        return json(StatusCode::SERVICE_UNAVAILABLE, r#"{"error":"try again"}"#);
    }
    if amount.is_multiple_of(DECLINED_EVERY) {
        return json(StatusCode::PAYMENT_REQUIRED, r#"{"error":"card_declined"}"#);
    }
    let payment = charging.made.fetch_add(1, Ordering::SeqCst) + 1;
    let effect = HistoryEvent::Effect {
        key,
        amount,
        payment,
    };
    charging.history.record("provider", effect);
    json(StatusCode::CREATED, &format!(r#"{{"charge":{payment}}}"#))
}
