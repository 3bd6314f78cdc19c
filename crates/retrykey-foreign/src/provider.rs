//! The payment provider: the other company's API that the checkout calls, as the lab runs it.
//!
//! It has its own `Idempotency-Key` contract, kept by the lab's own layer in front of its own
//! store: `POST /v1/charges` with a key charges once, and a retry with the same key replays the
//! first answer. Each charge and its key's answer commit together (stage 6's `commit`), so the
//! provider never charges twice for one key, whatever the network does. That is the promise
//! the checkout leans on; what the checkout must add is to present the same key every time.
//!
//! A test decides what the network and the provider do to the next charges:
//!
//! | fault | what happens | what the caller sees |
//! |---|---|---|
//! | `reply-lost` | charged; the answer's body breaks | no answer: the outcome is unknown |
//! | `error-before` | 503 before charging | a transient failure |
//! | `error-after` | charged; 503 instead of the 201 | a transient failure |
//! | `slow` | charged; the answer waits | no answer before the deadline |
//! | `declined` | 402 `card_declined`, kept for the key | a definitive refusal |
//!
//! - `POST /v1/charges` `{"amount": N}` with `Idempotency-Key` answers 201 `{"charge": id}`.
//! - `GET /v1/charges` answers `{"charges": [{"charge": id, "key": "...", "amount": N}]}`: what
//!   the provider holds, by key, so that a test counts the charges of each operation.
//! - `POST /v1/faults` `{"fault": "reply-lost", "times": 1}` queues a fault for the next
//!   charges; `{"fault": "slow", "times": 1, "delay_ms": 3000}` sets how long `slow` waits.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body as AxumBody;
use axum::extract::{Extension, Json, State};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Request, StatusCode, header};
use http_body::Frame;
use retrykey_http::{IdempotencyLayer, Reservation, StoredResponse};
use retrykey_replicas::{CommitError, Effect, SqliteEntries};
use serde::Deserialize;
use tower_service::Service;

/// The charges' path.
pub const CHARGES: &str = "/v1/charges";
/// The faults' path.
pub const FAULTS: &str = "/v1/faults";

/// The provider's table, beside the store's own in the same file.
const CHARGES_TABLE: &str = "CREATE TABLE IF NOT EXISTS charges (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    key    TEXT NOT NULL,
    amount INTEGER NOT NULL
)";

/// What the provider does to one charge request, as a test asks for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChargeFault {
    /// Charge, then break the answer's body: the caller gets no answer.
    ReplyLost,
    /// Answer 503 before charging.
    ErrorBefore,
    /// Charge, then answer 503 instead of the 201 (a retry replays the 201).
    ErrorAfter,
    /// Charge, then wait this long before answering.
    Slow(Duration),
    /// Refuse the card: 402, kept for the key like any answer.
    Declined,
}

impl ChargeFault {
    /// Every fault's name, as `POST /v1/faults` takes it.
    pub const NAMES: [&'static str; 5] = [
        "reply-lost",
        "error-before",
        "error-after",
        "slow",
        "declined",
    ];

    /// The fault called `name`; `slow` waits `delay`.
    pub fn parse(name: &str, delay: Duration) -> Option<Self> {
        Some(match name {
            "reply-lost" => Self::ReplyLost,
            "error-before" => Self::ErrorBefore,
            "error-after" => Self::ErrorAfter,
            "slow" => Self::Slow(delay),
            "declined" => Self::Declined,
            _ => return None,
        })
    }
}

/// The faults queued for the next charge requests, first come first served.
#[derive(Clone, Debug, Default)]
pub struct ChargeFaults(Arc<Mutex<VecDeque<ChargeFault>>>);

impl ChargeFaults {
    /// Queues `fault` for the next `times` charge requests.
    pub fn push(&self, fault: ChargeFault, times: usize) {
        let mut queue = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        queue.extend(std::iter::repeat_n(fault, times));
    }

    /// Drops every fault still queued: the provider is back to normal.
    pub fn clear(&self) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    fn next(&self) -> Option<ChargeFault> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
    }
}

/// The provider: its store (keys and charges in one SQLite file) and its faults.
#[derive(Clone, Debug)]
pub struct Provider {
    store: SqliteEntries,
    faults: ChargeFaults,
}

/// Why the provider could not start.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// Its table could not be created in the store's file.
    #[error("cannot create the charges table: {0}")]
    Table(String),
}

impl Provider {
    /// The provider over `store` (its keys' file, which also holds its charges), with no fault
    /// queued; creates its table if it is missing.
    pub async fn open(store: SqliteEntries) -> Result<Self, ProviderError> {
        store
            .commit(None, |tx| {
                tx.execute_batch(CHARGES_TABLE)?;
                Ok::<_, rusqlite::Error>(Effect::new((), answer(StatusCode::NO_CONTENT, "")))
            })
            .await
            .map_err(|error| ProviderError::Table(error.to_string()))?;
        Ok(Self {
            store,
            faults: ChargeFaults::default(),
        })
    }

    /// The faults a test queues.
    pub fn faults(&self) -> &ChargeFaults {
        &self.faults
    }

    /// The charges it holds, oldest first.
    pub async fn charges(&self) -> Result<Vec<Charge>, CommitError<rusqlite::Error>> {
        let listed = self
            .store
            .commit(None, |tx| {
                let mut statement =
                    tx.prepare("SELECT id, key, amount FROM charges ORDER BY id")?;
                let charges = statement
                    .query_map([], |row| {
                        Ok(Charge {
                            charge: row.get(0)?,
                            key: row.get(1)?,
                            amount: row.get(2)?,
                        })
                    })?
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Effect::new(charges, answer(StatusCode::NO_CONTENT, "")))
            })
            .await?;
        Ok(listed.value)
    }

    /// The service: the faults in front of the layer, the layer in front of the routes.
    pub fn service(self) -> Faulty {
        let layer = IdempotencyLayer::builder()
            .store(self.store.clone())
            .require_key(|parts| parts.method == Method::POST && parts.uri.path() == CHARGES)
            .build();
        let faults = self.faults.clone();
        let routes = Router::new()
            .route(CHARGES, post(charge).get(list))
            .route(FAULTS, post(queue))
            .with_state(Arc::new(self))
            .layer(layer);
        Faulty { routes, faults }
    }
}

/// One charge the provider holds.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Charge {
    /// Its number.
    pub charge: i64,
    /// The `Idempotency-Key` it was made under.
    pub key: String,
    /// Its amount.
    pub amount: i64,
}

/// A charge, as `POST /v1/charges` takes it.
#[derive(Debug, Deserialize)]
struct NewCharge {
    amount: i64,
}

/// A fault, as `POST /v1/faults` takes it.
#[derive(Debug, Deserialize)]
struct QueuedFault {
    fault: String,
    times: usize,
    #[serde(default)]
    delay_ms: u64,
}

/// Marks a charge request the fault layer wants declined: the handler answers it, so that the
/// refusal is kept for its key as any answer is.
#[derive(Clone, Copy, Debug)]
struct Decline;

async fn charge(
    State(provider): State<Arc<Provider>>,
    decline: Option<Extension<Decline>>,
    headers: HeaderMap,
    Json(new): Json<NewCharge>,
) -> Response {
    if new.amount <= 0 {
        let body = r#"{"error":"the amount must be positive"}"#;
        return json(StatusCode::UNPROCESSABLE_ENTITY, body);
    }
    let key = headers
        .get("idempotency-key")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .trim_matches('"')
        .to_owned();
    let declined = decline.is_some();
    let reservation = Reservation::current();
    let committed = provider
        .store
        .commit(reservation, move |tx| {
            if declined {
                let body = r#"{"error":"card_declined"}"#;
                return Ok(Effect::new(
                    None,
                    answer(StatusCode::PAYMENT_REQUIRED, body),
                ));
            }
            tx.execute(
                "INSERT INTO charges (key, amount) VALUES (?1, ?2)",
                rusqlite::params![key, new.amount],
            )?;
            let id = tx.last_insert_rowid();
            let body = format!(r#"{{"charge":{id}}}"#);
            Ok::<_, rusqlite::Error>(Effect::new(Some(id), answer(StatusCode::CREATED, &body)))
        })
        .await;
    match committed {
        Ok(effect) => effect.response().into_response(),
        // Another attempt holds the key now: it gives the answer; this client asks again.
        Err(CommitError::Fenced) => unavailable(),
        Err(error) => {
            tracing::error!(%error, "the charge did not commit");
            unavailable()
        }
    }
}

async fn list(State(provider): State<Arc<Provider>>) -> Response {
    match provider.charges().await {
        Ok(charges) => {
            let body = serde_json::json!({ "charges": charges });
            json(StatusCode::OK, &body.to_string())
        }
        Err(_) => unavailable(),
    }
}

async fn queue(State(provider): State<Arc<Provider>>, Json(queued): Json<QueuedFault>) -> Response {
    let delay = Duration::from_millis(queued.delay_ms);
    match ChargeFault::parse(&queued.fault, delay) {
        Some(fault) => {
            provider.faults.push(fault, queued.times);
            json(StatusCode::OK, r#"{"queued":true}"#)
        }
        None => json(
            StatusCode::UNPROCESSABLE_ENTITY,
            r#"{"error":"no such fault"}"#,
        ),
    }
}

fn answer(status: StatusCode, body: &str) -> StoredResponse {
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    StoredResponse::new(status, &headers, body.as_bytes())
}

fn json(status: StatusCode, body: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_owned(),
    )
        .into_response()
}

fn unavailable() -> Response {
    let mut response = json(StatusCode::SERVICE_UNAVAILABLE, r#"{"error":"try again"}"#);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// The provider's routes behind the faults a test queued: each charge request takes the next
/// fault, and the layer and the routes below never know.
#[derive(Clone, Debug)]
pub struct Faulty {
    routes: Router,
    faults: ChargeFaults,
}

impl<B> Service<Request<B>> for Faulty
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        let charging = request.method() == Method::POST && request.uri().path() == CHARGES;
        let fault = if charging { self.faults.next() } else { None };
        if fault == Some(ChargeFault::Declined) {
            request.extensions_mut().insert(Decline);
        }
        let mut routes = self.routes.clone();
        let request = request.map(AxumBody::new);
        Box::pin(async move {
            if fault == Some(ChargeFault::ErrorBefore) {
                return Ok(unavailable());
            }
            let response = match routes.call(request).await {
                Ok(response) => response,
                Err(never) => match never {},
            };
            Ok(match fault {
                Some(ChargeFault::ReplyLost) => {
                    let (parts, _) = response.into_parts();
                    Response::from_parts(parts, AxumBody::new(Broken))
                }
                Some(ChargeFault::ErrorAfter) => unavailable(),
                Some(ChargeFault::Slow(delay)) => {
                    tokio::time::sleep(delay).await;
                    response
                }
                _ => response,
            })
        })
    }
}

/// A body that breaks on its first read: the connection is cut before the answer arrives.
struct Broken;

impl http_body::Body for Broken {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        Poll::Ready(Some(Err(std::io::Error::other(
            "the provider's answer was lost on purpose",
        ))))
    }
}
