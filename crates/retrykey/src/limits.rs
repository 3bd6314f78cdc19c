//! The ledger's bounds: how many records it holds and how many units it commits.

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
