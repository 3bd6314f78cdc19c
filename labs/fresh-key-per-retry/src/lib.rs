// Mirrored by labs/fresh-key-per-retry: see labs/README.md before changing this file.
//! The retry loop: one logical operation as a sequence of attempts under one key and one budget.

use std::future::Future;
use std::time::Duration;

use crate::events;
use crate::{
    Attempt, Budget, Client, Failure, Outcome, Policy, RetrySteps, StatusFailure, Stop, Success,
    Verdict,
};
use retrykey::Key;

/// Runs attempts until one succeeds, the service answers definitively, or the policy, the
/// budget or the client's retry quota says stop.
///
/// - The key is chosen once, before the first attempt (`key`, or a new one from the client),
///   and every attempt presents it: that is what lets the service recognise a repeat.
/// - With a `parent` budget (a nested layer), the budget comes from
///   [`RetrySteps::child_budget`]: never more time or retries than the enclosing operation has left.
/// - Each attempt gets at most the budget left (and at most the policy's attempt timeout).
/// - Between attempts it waits for the service's `Retry-After` if there is one, else for the
///   backoff; if that wait does not fit in the budget left, it stops now instead of sleeping
///   until the deadline for nothing.
/// - The waits are plain `tokio::time::sleep`s inside this future: dropping the future cancels
///   the operation, and nothing keeps running behind the caller's back.
/// - Every attempt's start and end, and every decision, is a `tracing` event naming the
///   operation by its key's digest (`events.rs`; the fields are listed in `fields.rs`).
// ANCHOR: execute
pub async fn execute<P, T, F, Fut>(
    client: &Client<P>,
    key: Option<Key>,
    parent: Option<Budget>,
    mut attempt: F,
) -> Outcome<T>
where
    P: RetrySteps,
    F: FnMut(Attempt) -> Fut,
    Fut: Future<Output = Result<Success<T>, Failure>>,
{
    let policy = *client.policy();
    let budget = match &parent {
        Some(parent) => P::child_budget(parent, &policy),
        None => Budget::start(&policy),
    };
    // NEGATIVE: no identity is fixed here, before the first attempt (see the loop), so the
    // events name no key until the loop draws one.
    let mut tally = Tally::default();
    loop {
        let allowed = time_for_attempt(&policy, &budget);
        if allowed.is_zero() {
            return tally.unknown(Failure::TimedOut, Stop::BudgetExhausted);
        }
        tally.attempts += 1;
        // NEGATIVE: the key is drawn inside the loop, so every attempt presents a new identity
        // and a retry after a lost reply is a new operation to the service: a second effect.
        let key = key.clone().unwrap_or_else(|| client.new_key());
        tally.name_by(&key);
        let context = Attempt {
            key: key.clone(),
            number: tally.attempts,
            budget: budget.clone(),
        };
        let failure = match timed(&tally, allowed, attempt(context)).await {
            Ok(reply) => {
                client.quota().on_success(tally.last_retry_cost);
                return tally.succeeded(reply);
            }
            Err(failure) => failure,
        };
        tally.may_have_applied |= failure.may_have_applied();

        let plan = match (P::classify(&failure, &policy), &failure) {
            (Verdict::Reject, Failure::Status(status)) => return tally.rejected(status.clone()),
            (Verdict::Retry, _) => plan_retry(client, &budget, &failure, tally.attempts),
            _ => Err(Stop::NotRetryable),
        };
        match plan {
            Ok((wait, cost)) => {
                events::retrying(tally.key.as_ref(), tally.attempts, wait);
                tally.last_retry_cost = Some(cost);
                // A zero wait retries at once: even a zero sleep would cost a timer tick.
                if !wait.is_zero() {
                    tokio::time::sleep(wait).await;
                }
            }
            Err(stop) => return tally.unknown(failure, stop),
        }
    }
}
// ANCHOR_END: execute

/// The time one attempt gets: what is left of the budget, and at most the attempt timeout.
fn time_for_attempt(policy: &Policy, budget: &Budget) -> Duration {
    let remaining = budget.remaining();
    policy
        .attempt_timeout()
        .map_or(remaining, |t| t.min(remaining))
}

/// Runs one attempt within `allowed` (past it, the attempt has `TimedOut`), reporting its start
/// and its end.
async fn timed<T, Fut>(
    tally: &Tally,
    allowed: Duration,
    attempt: Fut,
) -> Result<Success<T>, Failure>
where
    Fut: Future<Output = Result<Success<T>, Failure>>,
{
    events::attempt_started(tally.key.as_ref(), tally.attempts, allowed);
    let result = match tokio::time::timeout(allowed, attempt).await {
        Ok(result) => result,
        Err(_elapsed) => Err(Failure::TimedOut),
    };
    events::attempt_ended(tally.key.as_ref(), tally.attempts, &result);
    result
}

/// What the loop has learnt of the operation so far, and the outcomes it ends with.
#[derive(Default)]
struct Tally {
    /// The key the events name the operation by (as its digest, never its text).
    key: Option<Key>,
    /// Attempts started.
    attempts: u32,
    /// Whether a failed attempt may have reached the service and applied the effect.
    may_have_applied: bool,
    /// The quota tokens the last retry paid: a success gives some back.
    last_retry_cost: Option<u32>,
}

impl Tally {
    /// From now on the events name the operation by `key` (as its digest).
    fn name_by(&mut self, key: &Key) {
        self.key = Some(key.clone());
    }

    fn succeeded<T>(self, reply: Success<T>) -> Outcome<T> {
        events::succeeded(self.key.as_ref(), self.attempts, reply.replayed);
        Outcome::Succeeded {
            value: reply.value,
            replayed: reply.replayed,
            attempts: self.attempts,
        }
    }

    fn rejected<T>(self, failure: StatusFailure) -> Outcome<T> {
        events::rejected(self.key.as_ref(), self.attempts, &failure);
        Outcome::Rejected {
            failure,
            attempts: self.attempts,
        }
    }

    fn unknown<T>(self, last: Failure, stop: Stop) -> Outcome<T> {
        events::unknown(
            self.key.as_ref(),
            self.attempts,
            stop,
            self.may_have_applied,
        );
        Outcome::Unknown {
            last,
            attempts: self.attempts,
            stop,
            may_have_applied: self.may_have_applied,
        }
    }
}

/// Decides whether attempt `number` may be followed by another: returns the wait before it and
/// the quota tokens paid for it, or why the operation stops here.
// ANCHOR: plan_retry
fn plan_retry<P: RetrySteps>(
    client: &Client<P>,
    budget: &Budget,
    failure: &Failure,
    number: u32,
) -> Result<(Duration, u32), Stop> {
    if number >= client.policy().max_attempts() || budget.retries_left() == 0 {
        return Err(Stop::AttemptsExhausted);
    }
    let retry_after = match failure {
        Failure::Status(status) => status.retry_after,
        _ => None,
    };
    let wait = retry_after.unwrap_or_else(|| client.next_delay(number));
    if wait >= budget.remaining() {
        return Err(match retry_after {
            Some(_) => Stop::RetryAfterPastBudget,
            None => Stop::BudgetExhausted,
        });
    }
    let cost = client
        .quota()
        .try_spend(failure)
        .ok_or(Stop::QuotaExhausted)?;
    if !budget.try_spend_retry() {
        return Err(Stop::AttemptsExhausted);
    }
    Ok((wait, cost))
}
// ANCHOR_END: plan_retry
