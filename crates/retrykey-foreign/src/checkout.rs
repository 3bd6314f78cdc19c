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
use http::request::Parts;
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use retrykey_client::adapters::HttpAdapter;
use retrykey_client::{Client, Outcome, Policy};
use retrykey_http::{
    Entries, EntryId, Fingerprint, IdempotencyLayer, Lookup, Reservation, Reserve, Scope,
    StoredResponse,
};
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
    entry_id    BLOB PRIMARY KEY,
    fingerprint BLOB NOT NULL,
    order_id    INTEGER NOT NULL REFERENCES orders (id),
    amount      INTEGER NOT NULL,
    point       TEXT NOT NULL,
    charge      INTEGER,
    updated_ms  INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS checkouts_by_point ON checkouts (point, updated_ms)";

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

    /// The service: the layer in front of the routes. The checkout stays shared, so that its
    /// completer and reaper run beside the service.
    pub fn service(self: Arc<Self>) -> Router {
        let layer = IdempotencyLayer::builder()
            .store(self.store.clone())
            .require_key(|parts| parts.method == Method::POST && parts.uri.path() == CHECKOUTS)
            .build();
        Router::new()
            .route(CHECKOUTS, post(checkout))
            .route("/orders", get(orders))
            .with_state(self)
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
    async fn run(
        &self,
        reservation: Reservation,
        amount: i64,
        fingerprint: Fingerprint,
    ) -> Response {
        let mut progress = match self.started(reservation, amount, fingerprint).await {
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

    /// Phase 1: the order and the operation's row, or the row a first attempt left. The row
    /// keeps the request's fingerprint, so that a completer can claim the key as the request
    /// would.
    async fn started(
        &self,
        reservation: Reservation,
        amount: i64,
        fingerprint: Fingerprint,
    ) -> Result<Progress, Response> {
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
                    "INSERT INTO checkouts (entry_id, fingerprint, order_id, amount, point, updated_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![
                        id.as_bytes(),
                        fingerprint.as_bytes(),
                        order,
                        amount,
                        Point::OrderCreated.name(),
                        now_ms()
                    ],
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
                    "UPDATE checkouts SET point = ?2, charge = ?3, updated_ms = ?4 WHERE entry_id = ?1",
                    params![id.as_bytes(), Point::Charged.name(), charge, now_ms()],
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
                    "UPDATE checkouts SET point = ?2, updated_ms = ?3 WHERE entry_id = ?1",
                    params![id.as_bytes(), Point::Finished.name(), now_ms()],
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
                    "UPDATE checkouts SET point = ?2, updated_ms = ?3 WHERE entry_id = ?1",
                    params![id.as_bytes(), Point::Finished.name(), now_ms()],
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

/// What one run of the completer did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Completed {
    /// Operations it drove to their end.
    pub finished: usize,
    /// Operations it could not finish yet (the charge still unknown): their keys released.
    pub unknown: usize,
    /// Operations an attempt is running right now: left to it.
    pub running: usize,
}

impl Checkout {
    /// Drives to their end, at most `limit` of them, the operations that stopped at a recovery
    /// point more than `idle` ago because their client left (a 503 it never retried, a crash
    /// it never came back from).
    ///
    /// The completer claims each operation's key as a retry of the same request would, with a
    /// reservation and a higher token than any before it: an attempt that holds the key is left
    /// alone, a late retry waits for the completer's answer and then replays it, and a paused
    /// attempt that wakes is fenced out. Its foreign call uses the same derived key, so the
    /// provider's record answers if the first attempt charged.
    pub async fn complete(
        &self,
        idle: Duration,
        limit: usize,
    ) -> Result<Completed, retrykey_http::Error> {
        let mut completed = Completed::default();
        for (id, fingerprint, amount) in self.stalled(idle, limit).await? {
            let token = match self.store.lookup(&id).await? {
                Lookup::Absent => match self.store.reserve(&id, &fingerprint).await? {
                    Reserve::Reserved(token) => token,
                    Reserve::Taken | Reserve::Full => {
                        completed.running += 1;
                        continue;
                    }
                },
                Lookup::InFlight { .. } | Lookup::Done { .. } => {
                    completed.running += 1;
                    continue;
                }
            };
            let reservation = Reservation { id, token };
            let response = self.run(reservation, amount, fingerprint).await;
            if response.status() == StatusCode::SERVICE_UNAVAILABLE {
                completed.unknown += 1;
                self.store.release(&id, token).await?;
            } else {
                completed.finished += 1;
            }
        }
        Ok(completed)
    }

    /// The operations stopped at a point before `finished` and untouched for `idle`.
    async fn stalled(
        &self,
        idle: Duration,
        limit: usize,
    ) -> Result<Vec<(EntryId, Fingerprint, i64)>, retrykey_http::Error> {
        let before = now_ms() - i64::try_from(idle.as_millis()).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let listed = self
            .store
            .commit(None, move |tx| {
                let mut statement = tx.prepare(
                    "SELECT entry_id, fingerprint, amount FROM checkouts
                     WHERE point <> 'finished' AND updated_ms <= ?1
                     ORDER BY updated_ms LIMIT ?2",
                )?;
                let rows = statement
                    .query_map(params![before, limit], |row| {
                        let id: [u8; 32] = row.get(0)?;
                        let fingerprint: [u8; 32] = row.get(1)?;
                        Ok((
                            EntryId::from_bytes(id),
                            Fingerprint::from_bytes(fingerprint),
                            row.get(2)?,
                        ))
                    })?
                    .collect::<Result<Vec<_>, _>>()?;
                Ok::<_, rusqlite::Error>(Effect::new(rows, answer(StatusCode::NO_CONTENT, "")))
            })
            .await;
        listed
            .map(|effect| effect.value)
            .map_err(|error| retrykey_http::Error::StoreUnavailable(error.to_string()))
    }

    /// Deletes, at most `limit` of them, the rows of operations finished more than
    /// `retention` ago; returns how many went. The orders stay: they are the shop's records, not
    /// the operation's bookkeeping, and the keys' answers are swept by the store.
    pub async fn reap(
        &self,
        retention: Duration,
        limit: usize,
    ) -> Result<usize, retrykey_http::Error> {
        let before = now_ms() - i64::try_from(retention.as_millis()).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let reaped = self
            .store
            .commit(None, move |tx| {
                let gone = tx.execute(
                    "DELETE FROM checkouts WHERE entry_id IN (
                         SELECT entry_id FROM checkouts
                         WHERE point = 'finished' AND updated_ms <= ?1
                         ORDER BY updated_ms LIMIT ?2)",
                    params![before, limit],
                )?;
                Ok::<_, rusqlite::Error>(Effect::new(gone, answer(StatusCode::NO_CONTENT, "")))
            })
            .await;
        reaped
            .map(|effect| effect.value)
            .map_err(|error| retrykey_http::Error::StoreUnavailable(error.to_string()))
    }
}

/// Milliseconds since the epoch.
fn now_ms() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
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

async fn checkout(State(checkout): State<Arc<Checkout>>, parts: Parts, body: Bytes) -> Response {
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
    // What the layer bound the key to (its default scope, the bearer token), kept for a
    // completer that claims the key later.
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let scope = Scope::from_bearer(&parts);
    let fingerprint = Fingerprint::of(&parts.method, &parts.uri, &scope, content_type, &body);
    checkout.run(reservation, new.amount, fingerprint).await
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
