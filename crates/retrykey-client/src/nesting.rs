// Mirrored by labs/budget-reset-per-layer: see labs/README.md before changing this file.
//! How a nested layer derives its budget from its caller's: it may shorten it, never renew it.

use crate::{Budget, Policy};

/// The budget a nested layer works within, given its caller's `parent` budget.
///
/// The deadline is the earlier of the parent's and the layer's own (`policy.budget()` from now);
/// the retries come from the parent's pool. Each layer may keep its own policy, but none of
/// them can hand itself more time or more retries than the operation has left, so three layers
/// that each "retry three times" still make at most the outer policy's downstream attempts.
pub fn child_budget(parent: &Budget, policy: &Policy) -> Budget {
    parent.shortened_to(Budget::deadline_from_now(policy))
}
