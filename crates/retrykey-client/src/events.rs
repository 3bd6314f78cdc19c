//! The executor's `tracing` events, one function each, so that the retry loop reads as the
//! decisions it makes and the field names stay those of [`crate::fields`].
//!
//! Every event names the operation by its [`KeyDigest`], never by the key. The digest is
//! computed only when a subscriber records the field, so a client that nobody traces pays
//! nothing for it. A seam the executor (and its copy under `labs/`) calls; hidden from the
//! documented API, which is `fields`.

use std::fmt;
use std::time::Duration;

use tracing::{Level, event};

use crate::fields::{
    ATTEMPT, ATTEMPTS, DECISION, DELAY_MS, KEY_DIGEST, KeyDigest, MAY_HAVE_APPLIED, OUTCOME,
    REPLAYED, STATUS, STOP, TIMEOUT_MS,
};
use crate::{Failure, Key, StatusFailure, Stop, Success};

/// The target every event of the retry loop carries, whichever file calls this module.
const TARGET: &str = "retrykey_client::executor";

/// DEBUG: attempt `number` starts, with at most `allowed` to finish.
pub fn attempt_started(key: Option<&Key>, number: u32, allowed: Duration) {
    event!(
        target: TARGET,
        Level::DEBUG,
        { KEY_DIGEST } = %Named(key),
        { ATTEMPT } = number,
        { TIMEOUT_MS } = millis(allowed),
        "attempt started"
    );
}

/// DEBUG: attempt `number` ended with `result`.
pub fn attempt_ended<T>(key: Option<&Key>, number: u32, result: &Result<Success<T>, Failure>) {
    let outcome = match result {
        Ok(reply) if reply.replayed => "replayed",
        Ok(_) => "succeeded",
        Err(Failure::Refused(_)) => "refused",
        Err(Failure::TimedOut) => "timed_out",
        Err(Failure::Lost(_)) => "lost",
        Err(Failure::Status(answer)) => {
            event!(
                target: TARGET,
                Level::DEBUG,
                { KEY_DIGEST } = %Named(key),
                { ATTEMPT } = number,
                { OUTCOME } = "status",
                { STATUS } = answer.status,
                "attempt ended"
            );
            return;
        }
    };
    event!(
        target: TARGET,
        Level::DEBUG,
        { KEY_DIGEST } = %Named(key),
        { ATTEMPT } = number,
        { OUTCOME } = outcome,
        "attempt ended"
    );
}

/// INFO: attempt `number` failed in a way worth retrying; the next starts after `wait`.
pub fn retrying(key: Option<&Key>, number: u32, wait: Duration) {
    event!(
        target: TARGET,
        Level::INFO,
        { KEY_DIGEST } = %Named(key),
        { ATTEMPT } = number,
        { DECISION } = "retry",
        { DELAY_MS } = millis(wait),
        "retrying after a wait"
    );
}

/// INFO: the operation succeeded after `attempts`.
pub fn succeeded(key: Option<&Key>, attempts: u32, replayed: bool) {
    event!(
        target: TARGET,
        Level::INFO,
        { KEY_DIGEST } = %Named(key),
        { ATTEMPTS } = attempts,
        { DECISION } = "succeeded",
        { REPLAYED } = replayed,
        "operation succeeded"
    );
}

/// WARN: the service refused the operation definitively.
pub fn rejected(key: Option<&Key>, attempts: u32, failure: &StatusFailure) {
    event!(
        target: TARGET,
        Level::WARN,
        { KEY_DIGEST } = %Named(key),
        { ATTEMPTS } = attempts,
        { DECISION } = "rejected",
        { STATUS } = failure.status,
        "operation rejected"
    );
}

/// WARN: the executor stopped without knowing whether the operation took effect.
pub fn unknown(key: Option<&Key>, attempts: u32, stop: Stop, may_have_applied: bool) {
    event!(
        target: TARGET,
        Level::WARN,
        { KEY_DIGEST } = %Named(key),
        { ATTEMPTS } = attempts,
        { DECISION } = "unknown",
        { STOP } = stop_name(stop),
        { MAY_HAVE_APPLIED } = may_have_applied,
        "operation outcome unknown"
    );
}

/// The [`STOP`] value for `stop`.
pub fn stop_name(stop: Stop) -> &'static str {
    match stop {
        Stop::AttemptsExhausted => "attempts_exhausted",
        Stop::BudgetExhausted => "budget_exhausted",
        Stop::RetryAfterPastBudget => "retry_after_past_budget",
        Stop::QuotaExhausted => "quota_exhausted",
        Stop::NotRetryable => "not_retryable",
    }
}

/// The operation's name in an event: its key's digest, written when the field is recorded, or
/// `none` before the operation has a key.
struct Named<'k>(Option<&'k Key>);

impl fmt::Display for Named<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(key) => write!(f, "{}", KeyDigest::of(key)),
            None => f.write_str("none"),
        }
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
