//! The receipt: the recorded outcome of one operation, as it was when it committed.

/// What an operation committed: its number and the ledger total right after its effect.
///
/// A receipt is historical. Replaying it later returns these same values, even if other
/// operations have moved the total since; only `replayed` describes the delivery.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Receipt {
    /// The operation's number in this ledger, starting at 1.
    pub operation: u64,
    /// The ledger total right after this operation's effect.
    pub total: u64,
    /// `true` when this reply comes from the record rather than from applying the effect.
    pub replayed: bool,
}

impl Receipt {
    /// The same recorded outcome, marked as delivered by a replay.
    pub fn replay(self) -> Self {
        Self {
            replayed: true,
            ..self
        }
    }
}
