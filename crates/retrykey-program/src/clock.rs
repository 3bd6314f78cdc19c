//! The wall clock the lab's stores read lease, claim and retention times from, in milliseconds,
//! and the clock a test sets ahead to play a replica or a dispatcher whose clock runs fast.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The wall clock a store reads lease and retention times from, in milliseconds.
///
/// Replicas on different machines read different clocks. [`Clock::ahead`] builds one that
/// runs ahead, which is how a test plays a replica that believes a lease has long expired.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Clock {
    ahead: Duration,
}

impl Clock {
    /// This machine's clock.
    pub fn system() -> Self {
        Self::default()
    }

    /// This machine's clock plus `ahead`.
    pub fn ahead(ahead: Duration) -> Self {
        Self { ahead }
    }

    /// Milliseconds since the Unix epoch, as this clock reads them.
    pub fn now_ms(&self) -> i64 {
        let since_epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            + self.ahead;
        i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX)
    }
}
