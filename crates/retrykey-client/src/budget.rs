//! The operation's budget: one deadline and one allowance of retries, shared by nested layers.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use crate::Policy;

/// What is left of one operation's allowance: a deadline, and the retries not yet spent.
///
/// Cloning shares the retry allowance: a nested layer that receives a clone (through
/// [`crate::nesting::child_budget`]) spends from the same pool, so the whole tree of layers makes
/// at most the policy's number of downstream attempts. Time follows tokio's clock, so tests can
/// pause it.
#[derive(Clone, Debug)]
pub struct Budget {
    deadline: Instant,
    retries: Arc<AtomicU32>,
}

impl Budget {
    /// A fresh budget for a top-level operation: `policy.budget()` from now, and
    /// `max_attempts - 1` retries.
    pub fn start(policy: &Policy) -> Self {
        Self {
            deadline: Self::deadline_from_now(policy),
            retries: Arc::new(AtomicU32::new(policy.max_attempts() - 1)),
        }
    }

    /// The deadline `policy.budget()` from now. A budget too long to represent (such as
    /// `Duration::MAX`) ends in about thirty years instead of overflowing.
    pub fn deadline_from_now(policy: &Policy) -> Instant {
        let now = Instant::now();
        now.checked_add(policy.budget())
            .unwrap_or_else(|| now + Duration::from_secs(30 * 365 * 24 * 60 * 60))
    }

    // ANCHOR: shortened_to
    /// The same retry pool with a deadline no later than `deadline` (a budget only shrinks).
    pub fn shortened_to(&self, deadline: Instant) -> Self {
        Self {
            deadline: self.deadline.min(deadline),
            retries: Arc::clone(&self.retries),
        }
    }
    // ANCHOR_END: shortened_to

    /// The instant after which no attempt may run.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// The time left before the deadline (zero once it has passed).
    pub fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// Retries not yet spent by any layer sharing this budget.
    pub fn retries_left(&self) -> u32 {
        self.retries.load(Ordering::Acquire)
    }

    /// Takes one retry from the shared pool; `false` when none is left.
    pub fn try_spend_retry(&self) -> bool {
        take_one(&self.retries)
    }
}

/// Takes one from a shared count unless it is already zero; `false` when nothing was left.
pub(crate) fn take_one(count: &AtomicU32) -> bool {
    count
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |left| {
            left.checked_sub(1)
        })
        .is_ok()
}
