//! The `Ledger` trait: what every backend and every negative variant implements.

use crate::{Error, Key, Receipt, Request};

/// A ledger that applies keyed operations at most once and keeps their receipts.
///
/// The contract, checked by the `retrykey-contract` suite for every implementation:
/// - a new key applies the effect and records its receipt together, or does neither;
/// - the same key with the same request returns the recorded receipt, marked `replayed`;
/// - the same key with a different request is [`Error::Conflict`] and changes nothing;
/// - capacity and ceiling reject new operations only, and change nothing.
pub trait Ledger: Send + Sync {
    /// Applies `request` under `key`, or replays the receipt already recorded for `key`.
    fn apply(&self, key: &Key, request: &Request) -> Result<Receipt, Error>;

    /// The committed total right now.
    fn total(&self) -> Result<u64, Error>;

    /// How many operation records the ledger holds.
    fn records(&self) -> Result<usize, Error>;

    /// The receipt recorded for `key`, read without applying anything.
    fn receipt(&self, key: &Key) -> Result<Option<Receipt>, Error>;
}
