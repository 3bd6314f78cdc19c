//! `POST /payments`: an order paid through a payment provider, in atomic phases.
//!
//! The charge is written in the provider's database, where no transaction of the shop's reaches,
//! so a payment cannot be one commit. It runs as phases instead, each one transaction of the
//! key's store, fenced by the attempt's reservation, that ends at a recovery point written in
//! the payment's row (`phases.rs`, the rows in `sqlite.rs` and `pg.rs`):
//!
//! 1. `started`: the payment's row, with its order, its amount and the request's fingerprint;
//! 2. the charge, through the provider (`provider.rs`), under the key derived from the
//!    payment's own (`retrykey_foreign::foreign_key`), the same for every attempt;
//! 3. `charged`: the provider's charge number;
//! 4. `paid`, or `declined` for a refusal, with the key's answer, in one commit.
//!
//! A retry finds the payment's row and resumes from its point. A charge whose outcome is unknown
//! is never guessed: 503 with `Retry-After`, the point kept, and the next attempt asks the
//! provider again under the same key. [`Shop::complete`] finishes the payments whose client
//! left.
//!
//! Each recovery point an attempt stands at is one INFO event whose `payment` field names it
//! (`started`, `charged`, `paid`, `declined`); a charge it cannot know is one WARN event,
//! `unknown`. A request's events sit in the layer's `idempotency` span, the completer's in a
//! `completer` span; both name the entry by its digest (`entry`), never by the key.

mod completer;
mod pg;
mod phases;
mod provider;
mod sqlite;

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::request::Parts;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use retrykey_foreign::foreign_key;
use retrykey_http::{EntryId, Fingerprint, Reservation, Scope, StoredResponse};
use retrykey_replicas::CommitError;
use serde::Deserialize;

pub use completer::Completed;
pub use provider::PaymentProvider;
pub(crate) use {pg::TABLE as PG_PAYMENTS, sqlite::TABLE as SQLITE_PAYMENTS};

use crate::{Shop, Step, json, problem, retry_later};
use provider::Charge;

/// The payments' path.
pub(crate) const PAYMENTS: &str = "/payments";

/// Everything the shop sells costs 2.50: a payment charges its order's quantity times this, in
/// cents.
const UNIT_PRICE: i64 = 250;

/// What a phase's work fails with: the database's error, or a row this code cannot read.
type Failed = Box<dyn std::error::Error + Send + Sync>;

/// Where a payment stands: the last recovery point that committed, with what it learned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Point {
    /// The row is written; the provider may or may not have charged.
    Started,
    /// The provider charged: its charge number. Not confirmed yet.
    Charged(i64),
    /// Paid or declined, and the key's answer stored.
    Ended(End),
}

/// How a payment ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    /// Paid: the provider's charge number.
    Paid(i64),
    /// The provider refused, with this status.
    Declined(u16),
}

impl Point {
    /// The point of a row's `point`, `charge` and `refusal` columns.
    fn of(name: &str, charge: Option<i64>, refusal: Option<i64>) -> Result<Self, Failed> {
        Ok(match (name, charge, refusal) {
            ("started", None, None) => Self::Started,
            ("charged", Some(charge), None) => Self::Charged(charge),
            ("paid", Some(charge), None) => Self::Ended(End::Paid(charge)),
            ("declined", None, Some(status)) => Self::Ended(End::Declined(status.try_into()?)),
            _ => return Err(format!("a payment row this shop cannot read ({name})").into()),
        })
    }

    /// The columns that hold it: `point`, `charge` and `refusal`.
    fn columns(self) -> (&'static str, Option<i64>, Option<i64>) {
        match self {
            Self::Started => ("started", None, None),
            Self::Charged(charge) => ("charged", Some(charge), None),
            Self::Ended(End::Paid(charge)) => ("paid", Some(charge), None),
            Self::Ended(End::Declined(status)) => ("declined", None, Some(status.into())),
        }
    }
}

/// One payment as its request asked for it: its entry (the operation), the request's
/// fingerprint (so that the completer can claim the key as the request would), and its order.
#[derive(Clone, Copy, Debug)]
struct PaymentRequest {
    id: EntryId,
    fingerprint: Fingerprint,
    order: i64,
}

/// A payment's row.
#[derive(Clone, Copy, Debug)]
struct Payment {
    order: i64,
    amount: i64,
    point: Point,
}

/// A new payment of `request`'s order, whose quantity is `quantity`.
fn started(request: &PaymentRequest, quantity: i64) -> Result<Payment, Failed> {
    let amount = quantity
        .checked_mul(UNIT_PRICE)
        .ok_or("the order's amount is too large")?;
    Ok(Payment {
        order: request.order,
        amount,
        point: Point::Started,
    })
}

/// A payment's row as either database reads it.
struct Row {
    fingerprint: Vec<u8>,
    order: i64,
    amount: i64,
    point: String,
    charge: Option<i64>,
    refusal: Option<i64>,
}

/// What phase 1 found.
#[derive(Debug)]
enum Begun {
    /// The payment's row: written now, or left by an earlier attempt.
    Payment(Payment),
    /// No payment to make.
    Refused(Refused),
}

/// Why phase 1 wrote no payment.
#[derive(Clone, Copy, Debug)]
enum Refused {
    /// No such order.
    NoOrder,
    /// The order is paid, or another payment of it is under way.
    OrderTaken,
    /// The key's row belongs to another request (another body), whose payment is unfinished.
    OtherRequest,
}

impl Refused {
    /// The answer: a 4xx, kept for the key; or a 503, not kept.
    fn response(self) -> Response {
        match self {
            Self::NoOrder => problem(StatusCode::NOT_FOUND, "no-such-order", "No such order"),
            Self::OrderTaken => {
                let title = "This order is paid, or another payment of it is under way";
                problem(StatusCode::CONFLICT, "order-taken", title)
            }
            // Once that payment ends, the layer keeps its answer for the key and refuses this
            // request as a changed one (422); until then, nothing can be said for good.
            Self::OtherRequest => {
                let title = "This key's payment, of another request, is not finished; retry";
                retry_later("key-in-use", title)
            }
        }
    }
}

/// What phase 1 decides from the key's row, if an earlier attempt left one.
fn begun(row: Option<Row>, request: &PaymentRequest) -> Result<Option<Begun>, Failed> {
    let Some(row) = row else { return Ok(None) };
    if row.fingerprint != request.fingerprint.as_bytes() {
        return Ok(Some(Begun::Refused(Refused::OtherRequest)));
    }
    let point = Point::of(&row.point, row.charge, row.refusal)?;
    Ok(Some(Begun::Payment(Payment {
        order: row.order,
        amount: row.amount,
        point,
    })))
}

/// Milliseconds since the epoch, as `updated_ms` holds them.
fn now_ms() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

/// A payment, as `POST /payments` takes it.
#[derive(Debug, Deserialize)]
struct NewPayment {
    order: i64,
}

pub(crate) async fn pay(State(shop): State<Arc<Shop>>, parts: Parts, body: Bytes) -> Response {
    let Some(provider) = shop.provider.clone() else {
        let title = "This shop takes no payments: it was started without --provider";
        return problem(StatusCode::NOT_IMPLEMENTED, "no-provider", title);
    };
    let order = match serde_json::from_slice::<NewPayment>(&body) {
        Ok(payment) if payment.order > 0 => payment.order,
        _ => {
            let title = "A payment names its order: {\"order\": N}";
            return problem(StatusCode::BAD_REQUEST, "invalid-payment", title);
        }
    };
    // The layer requires a key on this route, so a reservation is always there.
    let Some(fence) = Reservation::current() else {
        let title = "A payment needs an Idempotency-Key";
        return problem(StatusCode::BAD_REQUEST, "key-required", title);
    };
    // What the layer bound the key to (its default scope is the bearer token), kept in the row
    // for a completer that claims the key later.
    let content_type = (parts.headers.get(header::CONTENT_TYPE)).and_then(|v| v.to_str().ok());
    let scope = Scope::from_bearer(&parts);
    let request = PaymentRequest {
        id: fence.id,
        fingerprint: Fingerprint::of(&parts.method, &parts.uri, &scope, content_type, &body),
        order,
    };
    shop.resume(&provider, fence, request).await
}

pub(crate) async fn list(State(shop): State<Arc<Shop>>) -> Response {
    let Ok(rows) = shop.payment_rows().await else {
        return retry_later("store-unavailable", "The payments could not be read; retry");
    };
    let payments: Vec<_> = (rows.iter())
        .map(|row| {
            serde_json::json!({"order": row.order, "amount": row.amount, "point": row.point,
                "charge": row.charge, "provider": row.refusal})
        })
        .collect();
    let body = serde_json::json!({ "payments": payments });
    json(StatusCode::OK, &body.to_string())
}

impl Shop {
    /// Runs `request` under `fence` from its last recovery point to its end; or stops at a
    /// charge it cannot know yet, with a 503 that keeps the point for the next attempt.
    async fn resume(
        &self,
        provider: &PaymentProvider,
        fence: Reservation,
        request: PaymentRequest,
    ) -> Response {
        let payment = match self.begin(fence, request).await {
            Ok(Begun::Payment(payment)) => payment,
            Ok(Begun::Refused(refused)) => return refused.response(),
            Err(error) => return not_now(&error),
        };
        reached(payment.point, payment.order);
        let end = match payment.point {
            Point::Started => {
                let charged = self.charge(provider, fence, request.id, payment.amount);
                match charged.await {
                    Ok(end) => end,
                    Err(response) => return response,
                }
            }
            Point::Charged(charge) => End::Paid(charge),
            // Ended, its answer no longer kept for the key: the same answer again.
            Point::Ended(end) => return answer(&payment, end).response().into_response(),
        };
        match self.finish(fence, request.id, payment, end).await {
            Ok(effect) => {
                reached(Point::Ended(end), payment.order);
                effect.response().into_response()
            }
            Err(error) => not_now(&error),
        }
    }

    // ANCHOR: charge
    /// The provider's charge under the payment's derived key, then phase 2 if it charged: the
    /// payment's end, or the 503 of a charge not known yet.
    async fn charge(
        &self,
        provider: &PaymentProvider,
        fence: Reservation,
        id: EntryId,
        amount: i64,
    ) -> Result<End, Response> {
        let answered = provider.charge(foreign_key(&id, "charge"), amount).await;
        self.pause(Step::Called);
        match answered {
            Charge::Charged(charge) => {
                (self.charged(fence, id, charge).await).map_err(|error| not_now(&error))?;
                tracing::info!(payment = "charged", charge);
                self.pause(Step::Charged);
                Ok(End::Paid(charge))
            }
            Charge::Refused(status) => Ok(End::Declined(status)),
            // Charged or not: never guess. The next attempt asks again under the same key, and
            // the provider answers from its record if it charged.
            Charge::Unknown => {
                tracing::warn!(payment = "unknown", "the provider's answer is not known");
                let title = "The provider's answer is not known yet; retry";
                Err(retry_later("charge-unknown", title))
            }
        }
    }
    // ANCHOR_END: charge

    /// Waits at `step` if the shop was told to (a test's pause).
    fn pause(&self, step: Step) {
        let pause = self.pause;
        tokio::task::block_in_place(|| pause.at(step));
    }
}

/// The event of a payment at `point`.
fn reached(point: Point, order: i64) {
    let (name, ..) = point.columns();
    tracing::info!(payment = name, order);
}

/// A phase that did not commit: another attempt holds the key (it answers), or the store
/// failed; either way the client asks again.
fn not_now(error: &CommitError<Failed>) -> Response {
    match error {
        CommitError::Fenced => retry_later("lease-lost", "This attempt lost its key; retry"),
        CommitError::Work(_) | CommitError::Store(_) => {
            tracing::warn!(%error, "a payment's phase did not commit");
            retry_later(
                "store-unavailable",
                "The payment could not be stored; retry",
            )
        }
    }
}

/// The key's answer to a payment that ended as `end`: 201 paid, or 402 declined.
fn answer(payment: &Payment, end: End) -> StoredResponse {
    let mut body = serde_json::json!({"order": payment.order, "amount": payment.amount});
    let status = match end {
        End::Paid(charge) => {
            (body["status"], body["charge"]) = ("paid".into(), charge.into());
            StatusCode::CREATED
        }
        End::Declined(refusal) => {
            (body["status"], body["provider"]) = ("declined".into(), refusal.into());
            StatusCode::PAYMENT_REQUIRED
        }
    };
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    StoredResponse::new(status, &headers, body.to_string().as_bytes())
}
