// Mirrored by labs/no-jitter: see labs/README.md before changing this file.
//! The backoff schedule: exponential ceilings, and a wait drawn at random below each one.

use std::time::Duration;

use crate::{JitterRng, Policy};
use rand::RngExt;

/// The ceiling for retry number `retry` (1-based): `min(cap, base * 2^(retry-1))`.
///
/// ```
/// use std::time::Duration;
/// use retrykey_client::{Policy, backoff::ceiling};
///
/// let policy = Policy::default(); // base 100 ms, cap 2 s
/// assert_eq!(ceiling(&policy, 1), Duration::from_millis(100));
/// assert_eq!(ceiling(&policy, 3), Duration::from_millis(400));
/// assert_eq!(ceiling(&policy, 30), Duration::from_secs(2));
/// ```
pub fn ceiling(policy: &Policy, retry: u32) -> Duration {
    let doublings = retry.saturating_sub(1).min(31);
    policy
        .base()
        .checked_mul(1 << doublings)
        .map_or(policy.cap(), |delay| delay.min(policy.cap()))
}

/// The wait before retry number `retry`: uniform in `0 ..= ceiling` ("full jitter").
///
/// Clients that failed at the same moment draw different waits, so their retries arrive spread
/// over the whole window instead of all at once.
pub fn full_jitter(policy: &Policy, retry: u32, rng: &mut JitterRng) -> Duration {
    let ceiling = ceiling(policy, retry);
    let nanos = u64::try_from(ceiling.as_nanos()).unwrap_or(u64::MAX);
    // NEGATIVE: the draw starts at the ceiling instead of zero, so every client waits exactly
    // the ceiling and clients that failed together retry together, in lockstep.
    Duration::from_nanos(rng.random_range(nanos..=nanos))
}
