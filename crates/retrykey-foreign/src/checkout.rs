//! The checkout: an order, a charge through the provider, a confirmation, in atomic phases.
//!
//! `POST /checkouts` `{"amount": N}` with an `Idempotency-Key` runs behind the lab's layer, on
//! the same SQLite store as the checkout's own tables. The charge lives in the provider's
//! database, so no transaction can hold the order, the charge and the key's answer together.
//! The request runs as phases instead, each one local transaction that ends at a recovery
//! point, fenced by the attempt's reservation:
//!
//! 1. `order_created`: the order (pending) and the checkout's row, one phase;
//! 2. the charge, through the provider, under the key derived from the operation
//!    ([`foreign_key`](crate::foreign_key)), between two phases;
//! 3. `charged`: the provider's charge number, one phase;
//! 4. `finished`: the order paid and the key's answer, 201, one commit (`commit`, not `phase`).
//!
//! A retry that comes back (the client's, after a 503 or a crash) finds the last point that
//! committed and resumes there: from `order_created` it calls the provider again with the same
//! key, so the provider answers from its record if it charged the first time. A declined card
//! finishes the operation with 402, kept for the key. A charge whose outcome stays unknown (the
//! provider's answer lost, later than the deadline, a 503 on every attempt) is never guessed:
//! the checkout answers 503 with `Retry-After`, keeps its point, and the next attempt asks the
//! provider again.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use retrykey_client::adapters::HttpAdapter;
use retrykey_client::{Client, Outcome, Policy};
use retrykey_http::{IdempotencyLayer, Reservation, StoredResponse};
use retrykey_replicas::{CommitError, Effect, SqliteEntries};
use rusqlite::{OptionalExtension, Transaction, params};
use serde::Deserialize;

use crate::crash::{Hooks, Point as Crash};
use crate::foreign_key;
use crate::provider::CHARGES;

/// The checkouts' path.
pub const CHECKOUTS: &str = "/checkouts";

/// The checkout's tables, beside the store's own in the same file: the orders, and one row per
/// operation with the recovery point it reached.
const TABLES: &str = "CREATE TABLE IF NOT EXISTS orders (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    amount INTEGER NOT NULL,
    status TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS checkouts (
    entry_id BLOB PRIMARY KEY,
    order_id INTEGER NOT NULL REFERENCES orders (id),
    amount   INTEGER NOT NULL,
    point    TEXT NOT NULL,
    charge   INTEGER
)";

/// Where an operation stands: the last recovery point that committed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Point {
    /// The order exists, pending; the provider may or may not have charged.
    OrderCreated,
    /// The provider charged; the order is not confirmed yet.
    Charged,
    /// The operation ended: the order paid or declined, and the key's answer stored.
    Finished,
}

impl Point {
    /// The name the `checkouts` table holds.
    pub fn name(self) -> &'static str {
        match self {
            Self::OrderCreated => "order_created",
            Self::Charged => "charged",
            Self::Finished => "finished",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        [Self::OrderCreated, Self::Charged, Self::Finished]
            .into_iter()
            .find(|point| point.name() == name)
    }
}

/// One operation's row: its order, its amount, its point and, once charged, the charge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// The order it created.
    pub order: i64,
    /// What it charges.
    pub amount: i64,
    /// The last recovery point that committed.
    pub point: Point,
    /// The provider's charge number, from `charged` on.
    pub charge: Option<i64>,
}

/// How the checkout calls the provider: where, and the retry policy of one call.
#[derive(Clone, Debug)]
pub struct ProviderCall {
    /// The provider's base URL (`http://127.0.0.1:PORT`).
    pub url: String,
    /// The retries of one charge call: a few attempts within a deadline shorter than the
    /// checkout's own client will wait.
    pub policy: Policy,
}

impl ProviderCall {
    /// Three attempts within two seconds, each at most one.
    pub fn to(url: impl Into<String>) -> Self {
        let policy = Policy::builder()
            .max_attempts(3)
            .base(Duration::from_millis(20))
            .cap(Duration::from_millis(200))
            .budget(Duration::from_secs(2))
            .attempt_timeout(Duration::from_secs(1))
            .build()
            .expect("a valid policy");
        Self {
            url: url.into(),
            policy,
        }
    }
}

/// Why the checkout could not start.
#[derive(Debug, thiserror::Error)]
pub enum CheckoutError {
    /// Its tables could not be created in the store's file.
    #[error("cannot create the checkout's tables: {0}")]
    Tables(String),
}

/// The checkout: its store, and the provider it charges through.
#[derive(Debug)]
pub struct Checkout {
    store: SqliteEntries,
    call: ProviderCall,
    client: Client,
    http: HttpAdapter,
    hooks: Hooks,
}

impl Checkout {
    /// The checkout over `store`, charging through `call`; creates its tables if missing.
    pub async fn open(store: SqliteEntries, call: ProviderCall) -> Result<Self, CheckoutError> {
        store
            .commit(None, |tx| {
                tx.execute_batch(TABLES)?;
                Ok::<_, rusqlite::Error>(Effect::new((), answer(StatusCode::NO_CONTENT, "")))
            })
            .await
            .map_err(|error| CheckoutError::Tables(error.to_string()))?;
        let client = Client::builder(call.policy).build();
        Ok(Self {
            store,
            call,
            client,
            http: HttpAdapter::new(),
            hooks: Hooks::none(),
        })
    }

    /// The same checkout, running `hooks` at its crash points.
    pub fn with_hooks(self, hooks: Hooks) -> Self {
        Self { hooks, ..self }
    }

    /// The service: the layer in front of the routes.
    pub fn service(self) -> Router {
        let layer = IdempotencyLayer::builder()
            .store(self.store.clone())
            .require_key(|parts| parts.method == Method::POST && parts.uri.path() == CHECKOUTS)
            .build();
        Router::new()
            .route(CHECKOUTS, post(checkout))
            .route("/orders", get(orders))
            .with_state(Arc::new(self))
            .layer(layer)
    }

    /// Every order, `(id, amount, status)`, oldest first.
    pub async fn orders(&self) -> Result<Vec<(i64, i64, String)>, CommitError<rusqlite::Error>> {
        let listed = self
            .store
            .commit(None, |tx| {
                let mut statement =
                    tx.prepare("SELECT id, amount, status FROM orders ORDER BY id")?;
                let orders = statement
                    .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Effect::new(orders, answer(StatusCode::NO_CONTENT, "")))
            })
            .await?;
        Ok(listed.value)
    }

    /// Runs the operation held by `reservation` from its last recovery point to its end, or to
    /// an outcome it cannot know yet (`Err`: a response to send, not to keep).
    async fn run(&self, reservation: Reservation, amount: i64) -> Response {
        let mut progress = match self.started(reservation, amount).await {
            Ok(progress) => progress,
            Err(response) => return response,
        };
        loop {
            progress = match progress.point {
                Point::OrderCreated => match self.charge(reservation, progress).await {
                    Ok(next) => next,
                    Err(response) => return response,
                },
                Point::Charged => return self.confirm(reservation, progress).await,
                Point::Finished => return finished(&progress),
            };
        }
    }

    /// Phase 1: the order and the operation's row, or the row a first attempt left.
    async fn started(&self, reservation: Reservation, amount: i64) -> Result<Progress, Response> {
        let id = reservation.id;
        let phase = self
            .store
            .phase(reservation, move |tx| {
                if let Some(progress) = progress_of(tx, id.as_bytes())? {
                    return Ok(progress);
                }
                tx.execute("INSERT INTO orders (amount, status) VALUES (?1, 'pending')", [amount])?;
                let order = tx.last_insert_rowid();
                tx.execute(
                    "INSERT INTO checkouts (entry_id, order_id, amount, point) VALUES (?1, ?2, ?3, ?4)",
                    params![id.as_bytes(), order, amount, Point::OrderCreated.name()],
                )?;
                Ok::<_, rusqlite::Error>(Progress {
                    order,
                    amount,
                    point: Point::OrderCreated,
                    charge: None,
                })
            })
            .await;
        let progress = phase.map_err(|error| not_now(&error))?;
        self.hooks.at(Crash::OrderCreated);
        Ok(progress)
    }

    /// The foreign call, then phase 2 (`charged`), or the end of a declined operation.
    async fn charge(
        &self,
        reservation: Reservation,
        progress: Progress,
    ) -> Result<Progress, Response> {
        let key = foreign_key(&reservation.id, "charge");
        let url = format!("{}{CHARGES}", self.call.url.trim_end_matches('/'));
        let body = format!(r#"{{"amount":{}}}"#, progress.amount).into_bytes();
        let called = self
            .http
            .run_with_key(&self.client, key, &url, "application/json", body)
            .await;
        self.hooks.at(Crash::Called);
        let charge = match called {
            Ok(Outcome::Succeeded { value, .. }) => {
                serde_json::from_slice::<Charged>(&value.body)
                    .map_err(|_| unavailable("the provider's answer does not parse"))?
                    .charge
            }
            Ok(Outcome::Rejected { failure, .. }) => {
                return Err(self.decline(reservation, progress, failure.status).await);
            }
            // The charge may or may not have happened: never guess; the next attempt asks again
            // under the same key.
            Ok(Outcome::Unknown { .. }) | Err(_) => {
                return Err(unavailable("the provider's answer is not known yet"));
            }
        };
        let id = reservation.id;
        let phase = self
            .store
            .phase(reservation, move |tx| {
                tx.execute(
                    "UPDATE checkouts SET point = ?2, charge = ?3 WHERE entry_id = ?1",
                    params![id.as_bytes(), Point::Charged.name(), charge],
                )?;
                Ok::<_, rusqlite::Error>(())
            })
            .await;
        phase.map_err(|error| not_now(&error))?;
        self.hooks.at(Crash::Charged);
        Ok(Progress {
            point: Point::Charged,
            charge: Some(charge),
            ..progress
        })
    }

    /// The last phase: the order paid and the key's answer, in one commit.
    async fn confirm(&self, reservation: Reservation, progress: Progress) -> Response {
        let id = reservation.id;
        let done = Progress {
            point: Point::Finished,
            ..progress
        };
        let committed = self
            .store
            .commit(Some(reservation), move |tx| {
                tx.execute(
                    "UPDATE orders SET status = 'paid' WHERE id = ?1",
                    [done.order],
                )?;
                tx.execute(
                    "UPDATE checkouts SET point = ?2 WHERE entry_id = ?1",
                    params![id.as_bytes(), Point::Finished.name()],
                )?;
                Ok::<_, rusqlite::Error>(Effect::new((), paid(&done)))
            })
            .await;
        match committed {
            Ok(effect) => {
                self.hooks.at(Crash::Confirmed);
                effect.response().into_response()
            }
            Err(error) => not_now(&error),
        }
    }

    /// The end of an operation the provider refused: the order declined and the key's answer.
    async fn decline(&self, reservation: Reservation, progress: Progress, status: u16) -> Response {
        let id = reservation.id;
        let committed = self
            .store
            .commit(Some(reservation), move |tx| {
                tx.execute(
                    "UPDATE orders SET status = 'declined' WHERE id = ?1",
                    [progress.order],
                )?;
                tx.execute(
                    "UPDATE checkouts SET point = ?2 WHERE entry_id = ?1",
                    params![id.as_bytes(), Point::Finished.name()],
                )?;
                Ok::<_, rusqlite::Error>(Effect::new((), declined(progress.order, status)))
            })
            .await;
        match committed {
            Ok(effect) => effect.response().into_response(),
            Err(error) => not_now(&error),
        }
    }
}

/// The provider's 201 body.
#[derive(Debug, Deserialize)]
struct Charged {
    charge: i64,
}

/// A checkout, as `POST /checkouts` takes it.
#[derive(Debug, Deserialize)]
struct NewCheckout {
    amount: i64,
}

async fn checkout(State(checkout): State<Arc<Checkout>>, body: Bytes) -> Response {
    let Ok(new) = serde_json::from_slice::<NewCheckout>(&body) else {
        return json(
            StatusCode::UNPROCESSABLE_ENTITY,
            r#"{"error":"expected {\"amount\": N}"}"#,
        );
    };
    if new.amount <= 0 {
        return json(
            StatusCode::UNPROCESSABLE_ENTITY,
            r#"{"error":"the amount must be positive"}"#,
        );
    }
    // The layer requires a key on this route, so a reservation is always there.
    let Some(reservation) = Reservation::current() else {
        return json(
            StatusCode::BAD_REQUEST,
            r#"{"error":"an Idempotency-Key is required"}"#,
        );
    };
    checkout.run(reservation, new.amount).await
}

async fn orders(State(checkout): State<Arc<Checkout>>) -> Response {
    match checkout.orders().await {
        Ok(orders) => {
            let orders: Vec<_> = (orders.iter())
                .map(|(id, amount, status)| serde_json::json!({"order": id, "amount": amount, "status": status}))
                .collect();
            json(
                StatusCode::OK,
                &serde_json::json!({ "orders": orders }).to_string(),
            )
        }
        Err(error) => not_now(&error),
    }
}

/// The operation's row in `tx`, if a first attempt wrote it.
fn progress_of(tx: &Transaction<'_>, id: &[u8; 32]) -> rusqlite::Result<Option<Progress>> {
    tx.prepare_cached("SELECT order_id, amount, point, charge FROM checkouts WHERE entry_id = ?1")?
        .query_row([id.as_slice()], |row| {
            let name: String = row.get(2)?;
            let point = Point::parse(&name).ok_or_else(|| {
                let unknown = format!("unknown recovery point {name:?}");
                rusqlite::Error::FromSqlConversionFailure(
                    2,
                    rusqlite::types::Type::Text,
                    unknown.into(),
                )
            })?;
            Ok(Progress {
                order: row.get(0)?,
                amount: row.get(1)?,
                point,
                charge: row.get(3)?,
            })
        })
        .optional()
}

fn paid(progress: &Progress) -> StoredResponse {
    let body = serde_json::json!({
        "order": progress.order,
        "charge": progress.charge,
        "status": "paid",
    });
    answer(StatusCode::CREATED, &body.to_string())
}

fn declined(order: i64, status: u16) -> StoredResponse {
    let body = serde_json::json!({"order": order, "status": "declined", "provider": status});
    answer(StatusCode::PAYMENT_REQUIRED, &body.to_string())
}

/// What a finished operation answers when its key's answer is no longer stored.
fn finished(progress: &Progress) -> Response {
    match progress.charge {
        Some(_) => paid(progress).response().into_response(),
        None => declined(progress.order, 402).response().into_response(),
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

/// 503 with `Retry-After`: nothing is kept for the key, and the next attempt resumes.
fn unavailable(why: &str) -> Response {
    let body = serde_json::json!({ "error": why }).to_string();
    let mut response = json(StatusCode::SERVICE_UNAVAILABLE, &body);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// A phase that did not commit: another attempt holds the key (it answers), or the store
/// failed; either way the client asks again.
fn not_now<E: std::fmt::Display>(error: &CommitError<E>) -> Response {
    if !matches!(error, CommitError::Fenced) {
        tracing::error!(%error, "a checkout phase did not commit");
    }
    unavailable("try again")
}
