//! The client-wide retry quota: a token bucket that keeps retries a bounded share of traffic.

use std::sync::Mutex;

use crate::Failure;

/// Tokens in a full bucket by default.
pub const DEFAULT_QUOTA_CAPACITY: u32 = 500;
/// Tokens a retry costs by default.
pub const DEFAULT_RETRY_COST: u32 = 5;
/// Tokens a retry after a timeout costs by default (a timeout is the costlier signal).
pub const DEFAULT_TIMEOUT_COST: u32 = 10;
/// Tokens a first-try success gives back by default.
pub const DEFAULT_SUCCESS_REFUND: u32 = 1;

/// A token bucket shared by every operation of one client.
///
/// First attempts are free. A retry spends [`DEFAULT_RETRY_COST`] tokens (a retry after a
/// timeout spends [`DEFAULT_TIMEOUT_COST`]); when the bucket cannot pay, the operation stops with
/// [`Stop::QuotaExhausted`](crate::Stop::QuotaExhausted) instead of retrying. A success gives
/// tokens back: a first-try success refunds [`DEFAULT_SUCCESS_REFUND`], a success after retries
/// refunds what its last retry cost. So while a dependency is down, a client makes at most
/// `capacity / retry_cost` retries (100 with the defaults) on top of its first attempts, and the
/// bucket refills as calls succeed again. The scheme follows the one the major cloud SDKs use.
#[derive(Debug)]
pub struct RetryQuota {
    capacity: u32,
    retry_cost: u32,
    timeout_cost: u32,
    success_refund: u32,
    tokens: Mutex<u32>,
}

impl Default for RetryQuota {
    fn default() -> Self {
        Self::new(
            DEFAULT_QUOTA_CAPACITY,
            DEFAULT_RETRY_COST,
            DEFAULT_TIMEOUT_COST,
            DEFAULT_SUCCESS_REFUND,
        )
    }
}

impl RetryQuota {
    /// A full bucket with the given capacity and prices.
    pub fn new(capacity: u32, retry_cost: u32, timeout_cost: u32, success_refund: u32) -> Self {
        Self {
            capacity,
            retry_cost,
            timeout_cost,
            success_refund,
            tokens: Mutex::new(capacity),
        }
    }

    /// A bucket that never runs dry: for tests and demos that study one operation alone.
    pub fn unlimited() -> Self {
        Self::new(u32::MAX, 0, 0, 0)
    }

    /// Tokens in the bucket now.
    pub fn tokens(&self) -> u32 {
        *self.lock()
    }

    /// What a retry after `failure` costs.
    pub fn cost_of(&self, failure: &Failure) -> u32 {
        match failure {
            Failure::TimedOut => self.timeout_cost,
            _ => self.retry_cost,
        }
    }

    /// Pays for a retry after `failure`; returns the tokens paid, or `None` if the bucket cannot.
    pub fn try_spend(&self, failure: &Failure) -> Option<u32> {
        let cost = self.cost_of(failure);
        let mut tokens = self.lock();
        *tokens = tokens.checked_sub(cost)?;
        Some(cost)
    }

    /// Refunds after a success: `last_retry_cost` if the success needed retries, else the
    /// first-try refund. Never past the capacity.
    pub fn on_success(&self, last_retry_cost: Option<u32>) {
        let refund = last_retry_cost.unwrap_or(self.success_refund);
        let mut tokens = self.lock();
        *tokens = tokens.saturating_add(refund).min(self.capacity);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, u32> {
        // The counter stays valid even if a holder panicked: keep using it.
        self.tokens
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
