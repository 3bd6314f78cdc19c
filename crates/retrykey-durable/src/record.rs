//! The rows both backends read: an operation's record and a scope's ledger row.
//!
//! SQLite and PostgreSQL store the same two things in the same columns; the statements that
//! read and write them live with each backend.

use retrykey::{Error, Receipt, Request};

/// A record as stored: the request it was first used with and the receipt it earned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stored {
    /// The job name of the first request.
    pub job: String,
    /// The units of the first request.
    pub units: u64,
    /// The receipt, as committed.
    pub receipt: Receipt,
}

impl Stored {
    /// The reply to `request` presented again under this record's key: the recorded receipt,
    /// marked as a replay, or a conflict when the request differs.
    pub fn replay(&self, request: &Request) -> Result<Receipt, Error> {
        if self.job != request.job() || self.units != request.units() {
            return Err(Error::Conflict);
        }
        Ok(self.receipt.replay())
    }
}

/// The ledger row of one scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct State {
    /// The committed total.
    pub total: u64,
    /// Live records (after sweeping).
    pub records: u64,
    /// Operations ever applied; the next receipt is numbered one more.
    pub operations: u64,
}

/// A count as stored: both databases have signed 64-bit integers only, so an unsigned count is
/// stored as its bit pattern, and every `u64` round-trips exactly.
pub(crate) fn to_sql(value: u64) -> i64 {
    value as i64
}

/// The count whose bit pattern [`to_sql`] stored.
pub(crate) fn from_sql(value: i64) -> u64 {
    value as u64
}
