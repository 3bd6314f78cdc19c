//! The executor's `tracing` events, one function each, so that the retry loop reads as the
//! decisions it makes and the field names stay those of [`crate::fields`].
//!
//! Every event names the operation by its [`KeyDigest`], never by the key. A seam the executor
//! (and its copy under `labs/`) calls; hidden from the documented API, which is `fields`.

use std::time::Duration;

use tracing::{Level, event};

use crate::fields::{
    ATTEMPT, ATTEMPTS, DECISION, DELAY_MS, KEY_DIGEST, KeyDigest, MAY_HAVE_APPLIED, OUTCOME,
    REPLAYED, STATUS, STOP, TIMEOUT_MS,
};
use crate::{Failure, StatusFailure, Stop, Success};

/// The target every event of the retry loop carries, whichever file calls this module.
const TARGET: &str = "retrykey_client::executor";

/// DEBUG: attempt `number` starts, with at most `allowed` to finish.
pub fn attempt_started(digest: &KeyDigest, number: u32, allowed: Duration) {
    event!(
        target: TARGET,
        Level::DEBUG,
        { KEY_DIGEST } = %digest,
        { ATTEMPT } = number,
        { TIMEOUT_MS } = millis(allowed),
        "attempt started"
    );
}

/// DEBUG: attempt `number` ended with `result`.
pub fn attempt_ended<T>(digest: &KeyDigest, number: u32, result: &Result<Success<T>, Failure>) {
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
                { KEY_DIGEST } = %digest,
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
        { KEY_DIGEST } = %digest,
        { ATTEMPT } = number,
        { OUTCOME } = outcome,
        "attempt ended"
    );
}

/// INFO: attempt `number` failed in a way worth retrying; the next starts after `wait`.
pub fn retrying(digest: &KeyDigest, number: u32, wait: Duration) {
    event!(
        target: TARGET,
        Level::INFO,
        { KEY_DIGEST } = %digest,
        { ATTEMPT } = number,
        { DECISION } = "retry",
        { DELAY_MS } = millis(wait),
        "retrying after a wait"
    );
}

/// INFO: the operation succeeded after `attempts`.
pub fn succeeded(digest: &KeyDigest, attempts: u32, replayed: bool) {
    event!(
        target: TARGET,
        Level::INFO,
        { KEY_DIGEST } = %digest,
        { ATTEMPTS } = attempts,
        { DECISION } = "succeeded",
        { REPLAYED } = replayed,
        "operation succeeded"
    );
}

/// WARN: the service refused the operation definitively.
pub fn rejected(digest: &KeyDigest, attempts: u32, failure: &StatusFailure) {
    event!(
        target: TARGET,
        Level::WARN,
        { KEY_DIGEST } = %digest,
        { ATTEMPTS } = attempts,
        { DECISION } = "rejected",
        { STATUS } = failure.status,
        "operation rejected"
    );
}

/// WARN: the executor stopped without knowing whether the operation took effect.
pub fn unknown(digest: &KeyDigest, attempts: u32, stop: Stop, may_have_applied: bool) {
    event!(
        target: TARGET,
        Level::WARN,
        { KEY_DIGEST } = %digest,
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

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
