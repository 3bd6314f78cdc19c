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
//! | `takeover` | INFO | a database store found the key's owner no longer renewing its lease (dead or paused): this request's claim takes it over, with a higher token |
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

use tracing::Span;

use crate::EntryId;

/// The span every keyed request runs in.
pub const SPAN: &str = "idempotency";
/// The span's field holding the entry's digest.
pub const ENTRY: &str = "entry";
/// The field every event carries.
pub const DECISION: &str = "decision";
/// Every value of [`DECISION`].
pub const DECISIONS: [&str; 11] = [
    "attempt",
    "takeover",
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
pub(crate) fn name_entry(id: &EntryId) {
    let span = Span::current();
    if !span.is_disabled() {
        span.record(ENTRY, crate::key::hex(&id.as_bytes()[..6]));
    }
}

/// A replay of a stored answer.
pub(crate) fn replayed(status: http::StatusCode) {
    tracing::info!(decision = "replay", status = status.as_u16(), "replayed");
}

/// One of the layer's own answers, by its problem's slug.
pub(crate) fn refused(slug: &str, status: http::StatusCode) {
    if status.is_server_error() {
        tracing::warn!(
            decision = "refused",
            problem = slug,
            status = status.as_u16(),
            "refused"
        );
    } else {
        tracing::info!(
            decision = "refused",
            problem = slug,
            status = status.as_u16(),
            "refused"
        );
    }
}
