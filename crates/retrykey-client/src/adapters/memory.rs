//! The in-memory adapter: attempts against a Stage 1 ledger, with a switch that loses replies.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use retrykey::{Error, Ledger, Receipt, Request};

use crate::budget::take_one;
use crate::{Attempt, Failure, StatusFailure, Success, TransportError};

/// Calls a [`Ledger`] in-process, as an attempt function.
///
/// [`MemoryAdapter::lose_next_replies`] makes the next applies commit and then report
/// [`Failure::Lost`] with [`TransportError::ReplyDropped`]: the lost reply of Stage 1, without a
/// network.
#[derive(Clone)]
pub struct MemoryAdapter {
    ledger: Arc<dyn Ledger>,
    lose: Arc<AtomicU32>,
}

impl MemoryAdapter {
    /// An adapter in front of `ledger`.
    pub fn new(ledger: Arc<dyn Ledger>) -> Self {
        Self {
            ledger,
            lose: Arc::new(AtomicU32::new(0)),
        }
    }

    /// The next `count` applies commit, and their replies are lost.
    pub fn lose_next_replies(&self, count: u32) {
        self.lose.store(count, Ordering::Release);
    }

    /// One attempt: applies `request` under the attempt's key.
    pub async fn apply(
        &self,
        attempt: Attempt,
        request: &Request,
    ) -> Result<Success<Receipt>, Failure> {
        match self.ledger.apply(&attempt.key, request) {
            // Only a committed apply can lose its reply: a refusal changed nothing to hide.
            Ok(_) if take_one(&self.lose) => Err(Failure::Lost(TransportError::ReplyDropped)),
            Ok(receipt) => Ok(Success {
                replayed: receipt.replayed,
                value: receipt,
            }),
            Err(error) => Err(Failure::Status(failure_for(&error))),
        }
    }
}

impl std::fmt::Debug for MemoryAdapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryAdapter").finish_non_exhaustive()
    }
}

/// The answer a ledger error stands for, in the HTTP terms the classifier reads.
///
/// | ledger error | status | verdict |
/// |---|---|---|
/// | invalid key, invalid request, ceiling, capacity | 422 | reject |
/// | conflict (same key, different request) | 409 | reject |
/// | storage failure (outcome unknown) | 503 | retry |
pub fn failure_for(error: &Error) -> StatusFailure {
    let status = match error {
        Error::Conflict => 409,
        Error::Storage(_) => 503,
        _ => 422,
    };
    StatusFailure::new(status, error.to_string())
}
