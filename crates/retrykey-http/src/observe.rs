//! What the layer says about each keyed request: one span, one event per decision.
//!
//! Every keyed request the layer covers runs inside one span, `idempotency`, and each decision
//! taken for it is one `tracing` event inside that span, with a `decision` field. The names
//! below are the whole vocabulary: a dashboard or an alert can rely on them.
//!
//! A key is never logged: keys are chosen by clients and may carry what a log must not. The
//! span names the entry by its digest ([`ENTRY`]), the first bytes of the SHA-256 that names it
//! in the store, which is the same in every replica's log.
//!
//! | field | where | what |
//! |---|---|---|
//! | `method`, `path` | span | the request's method and path |
//! | `entry` | span | the entry's digest: 12 hex characters, never the key |
//! | `decision` | every event | one of [`DECISIONS`] |
//! | `token` | `attempt`, `recorded`, `released`, `fenced` | the reservation's fencing token |
//! | `outcome` | `wait_ended` | `completed`, `released` or `lapsed` |
//! | `problem`, `status` | `refused` | the problem's slug and status |
//! | `status` | `replay` | the replayed status |
//! | `error` | `store_unavailable` | why the store failed |
//!
//! | decision | level | meaning |
//! |---|---|---|
//! | `attempt` | INFO | the key was reserved: this request runs the first attempt |
//! | `lost_race` | DEBUG | another request reserved the key first: look again |
//! | `replay` | INFO | the stored answer is replayed |
//! | `wait` | INFO | a duplicate waits for the running first attempt |
//! | `wait_ended` | INFO | the wait ended: the attempt completed, was released, or its owner's lease lapsed (the waiter then takes the key over) |
//! | `recorded` | DEBUG | the first attempt's answer is stored |
//! | `released` | INFO | the first attempt failed (a 5xx, 408, 429 or a panic) and the key is free again |
//! | `fenced` | WARN | a late write of an attempt whose key was taken over was refused |
//! | `refused` | INFO (4xx), WARN (5xx) | the layer answered on its own: 400, 408, 413, 422, 409, or a 503 such as a full store or a wait past its deadline |
//! | `store_unavailable` | WARN | the store failed; the request is refused before any work (503) |
//!
//! Nothing the layer expects to happen is logged at ERROR.

use std::sync::Arc;

use tracing::Span;

use crate::{
    AttemptEnd, Entries, EntriesFuture, EntryId, Error, Fingerprint, Lookup, Problem, Reserve,
    StoredResponse, Token, Waiter,
};

/// The span every keyed request runs in.
pub const SPAN: &str = "idempotency";
/// The span's field holding the entry's digest.
pub const ENTRY: &str = "entry";
/// The field every event carries.
pub const DECISION: &str = "decision";
/// Every value of [`DECISION`].
pub const DECISIONS: [&str; 10] = [
    "attempt",
    "lost_race",
    "replay",
    "wait",
    "wait_ended",
    "recorded",
    "released",
    "fenced",
    "refused",
    "store_unavailable",
];
/// Every field of the span and its events.
pub const FIELDS: [&str; 9] = [
    "method", "path", ENTRY, DECISION, "token", "outcome", "problem", "status", "error",
];

/// The span of one keyed request (disabled, and free, when nothing listens).
pub(crate) fn request_span(method: &http::Method, path: &str) -> Span {
    tracing::info_span!(
        "idempotency",
        method = %method,
        path = path,
        entry = tracing::field::Empty
    )
}

/// Names the current request's entry in its span.
fn name_entry(id: &EntryId) {
    let span = Span::current();
    if !span.is_disabled() {
        span.record(ENTRY, crate::key::hex(&id.as_bytes()[..6]));
    }
}

/// A replay of a stored answer.
pub(crate) fn replayed(status: http::StatusCode) {
    tracing::info!(decision = "replay", status = status.as_u16(), "replayed");
}

/// One of the layer's own answers (a store failure is reported where it happens).
pub(crate) fn refused(problem: Problem, status: http::StatusCode) {
    match problem {
        Problem::StoreUnavailable | Problem::ResponseNotStored => {}
        _ if status.is_server_error() => {
            tracing::warn!(
                decision = "refused",
                problem = problem.slug(),
                status = status.as_u16(),
                "refused"
            )
        }
        _ => {
            tracing::info!(
                decision = "refused",
                problem = problem.slug(),
                status = status.as_u16(),
                "refused"
            )
        }
    }
}

/// A store whose every answer the layer reports as a decision.
pub(crate) struct Observed(pub(crate) Arc<dyn Entries>);

impl Entries for Observed {
    fn lookup<'a>(&'a self, id: &'a EntryId) -> EntriesFuture<'a, Lookup> {
        name_entry(id);
        self.0.lookup(id).map(|lookup| match lookup {
            Ok(Lookup::InFlight { fingerprint, wait }) => Ok(Lookup::InFlight {
                fingerprint,
                wait: observed_wait(wait),
            }),
            other => other,
        })
    }

    fn reserve<'a>(
        &'a self,
        id: &'a EntryId,
        fingerprint: &'a Fingerprint,
    ) -> EntriesFuture<'a, Reserve> {
        self.0.reserve(id, fingerprint).map(|reserve| {
            match &reserve {
                Ok(Reserve::Reserved(Token(token))) => {
                    tracing::info!(decision = "attempt", token, "first attempt");
                }
                Ok(Reserve::Taken) => tracing::debug!(decision = "lost_race", "lost the race"),
                // The engine answers these with a problem or a log line, which say so.
                Ok(Reserve::Full) | Err(_) => {}
            }
            reserve
        })
    }

    fn complete<'a>(
        &'a self,
        id: &'a EntryId,
        token: Token,
        response: StoredResponse,
    ) -> EntriesFuture<'a, ()> {
        self.0
            .complete(id, token, response)
            .map(move |done| ended(done, token, "recorded"))
    }

    fn release<'a>(&'a self, id: &'a EntryId, token: Token) -> EntriesFuture<'a, ()> {
        self.0
            .release(id, token)
            .map(move |done| ended(done, token, "released"))
    }
}

/// Reports the end of a first attempt: its answer stored or its key released (a failure is
/// the engine's to report).
fn ended(done: Result<(), Error>, Token(token): Token, decision: &str) -> Result<(), Error> {
    match (&done, decision) {
        (Ok(()), "recorded") => tracing::debug!(decision = "recorded", token, "answer stored"),
        (Ok(()), _) => tracing::info!(decision = "released", token, "key released"),
        (Err(_), _) => {}
    }
    done
}

/// A waiter that reports when the wait starts and how it ends.
fn observed_wait(wait: Waiter) -> Waiter {
    let span = Span::current();
    Waiter::new(tracing::Instrument::instrument(
        async move {
            tracing::info!(decision = "wait", "waiting for the first attempt");
            let end = wait.await;
            let outcome = match &end {
                AttemptEnd::Completed(_) => "completed",
                AttemptEnd::Released => "released",
                AttemptEnd::Lapsed => "lapsed",
            };
            tracing::info!(decision = "wait_ended", outcome, "wait ended");
            end
        },
        span,
    ))
}
