//! The ledger's bounds: how many records it holds and how many units it commits.

use crate::Error;

/// Records held by default. A demonstration bound, not a production recommendation.
pub const DEFAULT_MAX_RECORDS: usize = 64;
/// Units committed by default. A demonstration bound, not a production recommendation.
pub const DEFAULT_MAX_UNITS: u64 = 1_000_000;

/// Bounds a ledger enforces on new operations. Replays of stored operations are never bounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// At most this many operation records; a new operation beyond it is rejected.
    pub max_records: usize,
    /// The committed total may reach this value but not pass it.
    pub max_units: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_records: DEFAULT_MAX_RECORDS,
            max_units: DEFAULT_MAX_UNITS,
        }
    }
}

impl Limits {
    /// Admits a new operation of `units` onto a ledger that holds `records` records and a
    /// committed `total`: the total after its effect, or why it is rejected. Capacity is checked
    /// before the ceiling, and a sum that would overflow is a ceiling rejection. Replays never
    /// come here: a ledger looks the key up first.
    ///
    /// Every ledger calls this, so the in-memory store and the database ledgers cannot
    /// disagree about the bounds.
    ///
    /// ```
    /// use retrykey::{Error, Limits};
    ///
    /// let limits = Limits { max_records: 2, max_units: 10 };
    /// assert_eq!(limits.admit(1, 7, 3), Ok(10));
    /// assert_eq!(limits.admit(2, 7, 3), Err(Error::Capacity { max_records: 2 }));
    /// assert_eq!(
    ///     limits.admit(1, 7, 4),
    ///     Err(Error::Ceiling { units: 4, total: 7, max_units: 10 })
    /// );
    /// ```
    pub fn admit(&self, records: u64, total: u64, units: u64) -> Result<u64, Error> {
        if records >= self.max_records as u64 {
            return Err(Error::Capacity {
                max_records: self.max_records,
            });
        }
        total
            .checked_add(units)
            .filter(|&total| total <= self.max_units)
            .ok_or(Error::Ceiling {
                units,
                total,
                max_units: self.max_units,
            })
    }
}
