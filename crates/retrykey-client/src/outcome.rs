//! The final result of one operation: succeeded, rejected, or unknown to the caller.

use crate::{Failure, StatusFailure};

/// How one logical operation ended, as far as the caller can tell.
///
/// The three cases call for three different actions: use the result; fix the request (retrying
/// it unchanged cannot help); or find out later — retry with the *same key*, or reconcile.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome<T> {
    /// An attempt succeeded. `replayed` says the service answered from its record.
    Succeeded {
        /// The service's result.
        value: T,
        /// `true` when the result was delivered from the service's record of an earlier attempt.
        replayed: bool,
        /// Attempts made, this one included.
        attempts: u32,
    },
    /// The service gave a definitive answer: the operation was refused and did not take effect.
    Rejected {
        /// The status the service answered with, and its explanation.
        failure: StatusFailure,
        /// Attempts made, this one included.
        attempts: u32,
    },
    /// The caller does not know whether the operation took effect. This is the caller's state of
    /// knowledge, not the server's: the service may well have committed it.
    Unknown {
        /// The last attempt's failure.
        last: Failure,
        /// Attempts made (0 when the budget was already spent before the first one).
        attempts: u32,
        /// Why the executor stopped.
        stop: Stop,
        /// `false` only when no attempt could have reached the service (every one was refused
        /// at connect time): then nothing happened, though the caller still has no answer.
        may_have_applied: bool,
    },
}

impl<T> Outcome<T> {
    /// Attempts made, whatever the outcome.
    pub fn attempts(&self) -> u32 {
        match self {
            Self::Succeeded { attempts, .. }
            | Self::Rejected { attempts, .. }
            | Self::Unknown { attempts, .. } => *attempts,
        }
    }

    /// The short name of the case: `succeeded`, `rejected` or `unknown`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Succeeded { .. } => "succeeded",
            Self::Rejected { .. } => "rejected",
            Self::Unknown { .. } => "unknown",
        }
    }
}

/// Why the executor stopped without a success or a definitive answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The policy's attempts (or the retries shared with enclosing layers) were used up.
    AttemptsExhausted,
    /// The next wait would not fit in the budget left, or no time was left for an attempt.
    BudgetExhausted,
    /// The service asked to come back later than the budget allows, so the executor stopped
    /// early instead of waiting until the deadline for nothing.
    RetryAfterPastBudget,
    /// The client-wide retry quota was empty: retries are shed while the service is failing.
    QuotaExhausted,
    /// The failure is neither definitive nor safe to retry (a 500 by default).
    NotRetryable,
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::AttemptsExhausted => "attempts exhausted",
            Self::BudgetExhausted => "budget exhausted",
            Self::RetryAfterPastBudget => "Retry-After is past the budget",
            Self::QuotaExhausted => "client retry quota empty",
            Self::NotRetryable => "not retryable",
        })
    }
}
