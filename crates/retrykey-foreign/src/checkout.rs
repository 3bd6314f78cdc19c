//! The checkout: an order, a charge through the provider, a confirmation, in atomic phases.
//!
//! `POST /checkouts` `{"amount": N}` with an `Idempotency-Key` runs behind the lab's layer, on
//! the store that holds the key and the checkout's own rows ([`Books`]). The charge lives in the
//! provider's database, so no transaction can hold the order, the charge and the key's answer
//! together. The request runs as phases instead ([`phases`](crate::phases)), each one local
//! transaction ending at a recovery point, fenced by the attempt's reservation:
//!
//! 1. `order_created`: the order (pending) and the operation's row;
//! 2. the charge, through the provider, under the key derived from the operation's
//!    ([`foreign_key`](crate::foreign_key));
//! 3. `charged`: the provider's charge number;
//! 4. `finished`: the order paid, its shipment and the key's answer (201), in one commit.
//!
//! A retry finds the last point that committed and resumes there. A declined card finishes the
//! operation with 402, kept for the key. A charge whose outcome stays unknown is never guessed:
//! the checkout answers 503 with `Retry-After` and keeps its point. Operations whose client left
//! are finished by [`Checkout::complete`], and finished ones are cleared by [`Checkout::reap`].

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::response::Response;
use axum::routing::{get, post};
use http::request::Parts;
use http::{Method, StatusCode, header};
use retrykey_http::{
    Entries, EntriesFuture, EntryId, Fingerprint, IdempotencyLayer, Lookup, Reservation, Reserve,
    Scope, StoredResponse, Token,
};
use serde::Deserialize;

use crate::answers::{json, uncommitted};
use crate::crash::Hooks;
use crate::parts::{KeyFn, ProviderTransport};
use crate::{Books, BooksError, CheckoutParts, Claim, ProviderCall, Purchase};

/// The checkouts' path.
pub const CHECKOUTS: &str = "/checkouts";

/// What one run of the completer did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Completed {
    /// Operations it drove to their end.
    pub finished: usize,
    /// Operations it could not finish yet, answered 503 (the charge still unknown, or a phase
    /// refused or failed): their keys released, for a later run or retry.
    pub unknown: usize,
    /// Operations an attempt is running right now: left to it.
    pub running: usize,
    /// Operations whose answer was stored by the time it claimed them.
    pub done: usize,
}

/// Why a run of the completer stopped.
#[derive(Debug, thiserror::Error)]
pub enum CompleterError {
    /// The checkout's rows could not be read or written.
    #[error(transparent)]
    Books(#[from] BooksError),
    /// The key's store failed while the completer claimed, completed or released a key.
    #[error("the key's store failed: {0}")]
    Keys(#[from] retrykey_http::Error),
    /// The completer's own answer could not be read back to end its attempt.
    #[error("cannot read the completer's answer: {0}")]
    Answer(String),
}

/// A key given back or completed by an attempt that was fenced out meanwhile: nothing to do,
/// the attempt that holds the key now ends it.
fn owned(ended: Result<(), retrykey_http::Error>) -> Result<(), retrykey_http::Error> {
    match ended {
        Ok(()) | Err(retrykey_http::Error::NotOwner) => Ok(()),
        Err(error) => Err(error),
    }
}

/// `response` as the key keeps an answer.
async fn stored(response: Response) -> Result<StoredResponse, CompleterError> {
    let (parts, body) = response.into_parts();
    let body = axum::body::to_bytes(body, ANSWER_BYTES)
        .await
        .map_err(|error| CompleterError::Answer(error.to_string()))?;
    Ok(StoredResponse::new(parts.status, &parts.headers, &body))
}

/// The most bytes of an answer the completer reads back: the checkout's are a few dozen.
const ANSWER_BYTES: usize = 64 * 1024;

/// The checkout: its parts, and the steps that drive them.
pub struct Checkout {
    parts: CheckoutParts,
    steps: &'static dyn Steps,
}

impl fmt::Debug for Checkout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Checkout")
            .field("parts", &self.parts)
            .finish_non_exhaustive()
    }
}

impl Checkout {
    /// The checkout keeping its rows in `books`, charging through `call`.
    pub fn new(books: impl Books, call: ProviderCall) -> Self {
        Self {
            parts: CheckoutParts::new(Arc::new(books), call),
            steps: &Standard,
        }
    }

    /// The same checkout, running `hooks` when the provider has answered.
    pub fn with_hooks(mut self, hooks: Hooks) -> Self {
        self.parts.hooks = hooks;
        self
    }

    /// The same checkout, sending each charge attempt through `transport` rather than over
    /// TCP, with the jitter of its retries drawn from `seed`: how the simulator runs it.
    pub fn with_transport(mut self, transport: Arc<dyn ProviderTransport>, seed: u64) -> Self {
        self.parts.set_transport(transport, seed);
        self
    }

    /// The same checkout with other steps: a lab's copy of one file.
    #[doc(hidden)]
    pub fn with_steps(mut self, steps: &'static dyn Steps) -> Self {
        self.parts.key = steps.foreign_key();
        self.steps = steps;
        self
    }

    /// The service: the layer in front of the routes. The checkout stays shared, so that its
    /// completer and reaper run beside the service.
    pub fn service(self: Arc<Self>) -> Router {
        let layer = IdempotencyLayer::builder()
            .store(SharedEntries(self.books().entries()))
            .require_key(|parts| parts.method == Method::POST && parts.uri.path() == CHECKOUTS)
            .build();
        Router::new()
            .route(CHECKOUTS, post(post_checkout))
            .route("/orders", get(get_orders))
            .with_state(self)
            .layer(layer)
    }

    /// Where the checkout keeps its rows.
    pub fn books(&self) -> &dyn Books {
        self.parts.books()
    }

    /// Drives to their end, at most `limit` of them, the operations that stopped at a recovery
    /// point more than `idle` ago because their client left (a 503 it never retried, a crash
    /// it never came back from).
    ///
    /// The completer claims each operation's key as a retry of its request would
    /// ([`claim`](crate::claim)), leaves an operation whose key an attempt holds, and releases
    /// the key of one whose charge is still unknown, so that a later run or retry asks again.
    pub async fn complete(
        &self,
        idle: Duration,
        limit: usize,
    ) -> Result<Completed, CompleterError> {
        let mut completed = Completed::default();
        let entries = self.books().entries();
        for purchase in self.books().stalled(idle, limit).await? {
            let claimed = (self.steps)
                .claim(&*entries, &purchase.id, &purchase.fingerprint)
                .await?;
            let fence = match claimed {
                Claim::Held(fence) => fence,
                Claim::Running => {
                    completed.running += 1;
                    continue;
                }
                Claim::Done => {
                    completed.done += 1;
                    continue;
                }
            };
            let response = self.steps.resume(&self.parts, fence, purchase).await;
            if response.status() == StatusCode::SERVICE_UNAVAILABLE {
                completed.unknown += 1;
                owned(entries.release(&fence.id, fence.token).await)?;
            } else {
                completed.finished += 1;
                // The attempt ends as the layer ends one: the last phase stored this answer
                // with its rows, so the store writes nothing more and stops renewing the lease.
                let answer = stored(response).await?;
                owned(entries.complete(&fence.id, fence.token, answer).await)?;
            }
        }
        tracing::info!(
            finished = completed.finished,
            unknown = completed.unknown,
            running = completed.running,
            done = completed.done,
            "the completer ran"
        );
        Ok(completed)
    }

    /// Deletes, at most `limit` of them, the rows of operations finished more than `retention`
    /// ago; returns how many went. The orders stay, and the store sweeps the keys' answers.
    pub async fn reap(&self, retention: Duration, limit: usize) -> Result<usize, BooksError> {
        let reaped = self.books().reap(retention, limit).await?;
        tracing::info!(reaped, "the reaper ran");
        Ok(reaped)
    }
}

/// The steps a lab replaces with its copy of one file: the derived key (`key.rs`), the phases
/// (`phases.rs`) and the completer's claim (`completer.rs`). Not part of the documented API.
#[doc(hidden)]
pub trait Steps: Send + Sync {
    /// How the key of a foreign call is made.
    fn foreign_key(&self) -> KeyFn {
        crate::foreign_key
    }

    /// One operation from its last recovery point.
    fn resume<'a>(
        &self,
        parts: &'a CheckoutParts,
        fence: Reservation,
        purchase: Purchase,
    ) -> Pin<Box<dyn Future<Output = Response> + Send + 'a>> {
        Box::pin(crate::phases::resume(parts, fence, purchase))
    }

    /// The completer's claim of one operation's key.
    fn claim<'a>(
        &self,
        entries: &'a dyn Entries,
        operation: &'a EntryId,
        fingerprint: &'a Fingerprint,
    ) -> Pin<Box<dyn Future<Output = Result<Claim, retrykey_http::Error>> + Send + 'a>> {
        Box::pin(crate::claim(entries, operation, fingerprint))
    }
}

/// The correct steps.
#[doc(hidden)]
#[derive(Debug)]
pub struct Standard;

impl Steps for Standard {}

/// The key's store as the layer takes it: whichever store the books keep their rows in.
struct SharedEntries(Arc<dyn Entries>);

impl Entries for SharedEntries {
    fn lookup<'a>(&'a self, id: &'a EntryId) -> EntriesFuture<'a, Lookup> {
        self.0.lookup(id)
    }

    fn reserve<'a>(
        &'a self,
        id: &'a EntryId,
        fingerprint: &'a Fingerprint,
    ) -> EntriesFuture<'a, Reserve> {
        self.0.reserve(id, fingerprint)
    }

    fn complete<'a>(
        &'a self,
        id: &'a EntryId,
        token: Token,
        response: StoredResponse,
    ) -> EntriesFuture<'a, ()> {
        self.0.complete(id, token, response)
    }

    fn release<'a>(&'a self, id: &'a EntryId, token: Token) -> EntriesFuture<'a, ()> {
        self.0.release(id, token)
    }
}

/// A checkout, as `POST /checkouts` takes it.
#[derive(Debug, Deserialize)]
struct NewCheckout {
    amount: i64,
}

async fn post_checkout(
    State(checkout): State<Arc<Checkout>>,
    parts: Parts,
    body: Bytes,
) -> Response {
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
    let Some(fence) = Reservation::current() else {
        return json(
            StatusCode::BAD_REQUEST,
            r#"{"error":"an Idempotency-Key is required"}"#,
        );
    };
    // What the layer bound the key to (its default scope, the bearer token), kept for a
    // completer that claims the key later.
    let content_type = (parts.headers.get(header::CONTENT_TYPE)).and_then(|v| v.to_str().ok());
    let scope = Scope::from_bearer(&parts);
    let purchase = Purchase {
        id: fence.id,
        fingerprint: Fingerprint::of(&parts.method, &parts.uri, &scope, content_type, &body),
        amount: new.amount,
    };
    checkout
        .steps
        .resume(&checkout.parts, fence, purchase)
        .await
}

async fn get_orders(State(checkout): State<Arc<Checkout>>) -> Response {
    match checkout.books().orders().await {
        Ok(orders) => json(
            StatusCode::OK,
            &serde_json::json!({ "orders": orders }).to_string(),
        ),
        Err(error) => uncommitted(&error),
    }
}
