//! How long an in-flight record belongs to its owner (the clock that says when that ends is
//! [`retrykey_program::Clock`]).
//!
//! A lease lets another replica take over a key whose owner died mid-request. It does not make
//! the takeover safe: an expired lease proves only that the owner stopped renewing, not that it
//! stopped working (it may be paused, or its clock may differ). The fencing token does that:
//! see `fence.rs`.

use std::time::Duration;

/// The lease an in-flight record is held with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    /// How long a reservation is held without renewal. Another replica may take the key over
    /// once this much time has passed since the last renewal.
    pub duration: Duration,
    /// How long a running attempt may keep renewing: past this, its lease lapses even if the
    /// handler still runs, so a stuck handler cannot hold a key forever.
    pub max_hold: Duration,
}

impl Lease {
    /// How often a running attempt renews its lease: three times per lease, so that one late
    /// renewal does not lose it.
    pub fn renew_every(&self) -> Duration {
        self.duration / 3
    }
}

impl Default for Lease {
    /// A 10-second lease, renewed for at most 10 minutes.
    fn default() -> Self {
        Self {
            duration: Duration::from_secs(10),
            max_hold: Duration::from_secs(600),
        }
    }
}

/// A duration in milliseconds, as the tables store it.
pub(crate) fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}
