//! What one attempt receives (its key, number and budget) and what a successful one returns.

use std::time::Duration;

use retrykey::Key;

use crate::Budget;

/// The context of one attempt, handed to the attempt function by the executor.
///
/// `key` is the operation's key: the same value on every attempt of one operation. `budget` is
/// what is left of the operation's allowance; a nested layer passes it to
/// [`Client::run_nested`](crate::Client::run_nested) so that it cannot start a fresh one.
#[derive(Clone, Debug)]
pub struct Attempt {
    /// The operation key, chosen once per logical operation.
    pub key: Key,
    /// This attempt's number, starting at 1.
    pub number: u32,
    /// The operation's remaining allowance (deadline and retries), shared with nested layers.
    pub budget: Budget,
}

impl Attempt {
    /// The time left before the operation's deadline.
    pub fn remaining(&self) -> Duration {
        self.budget.remaining()
    }
}

/// A successful attempt's value, and whether the service answered from its record (a replay).
///
/// A replay is the real result of the operation, delivered again; it is not an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Success<T> {
    /// What the service returned.
    pub value: T,
    /// `true` when the service found the key's record instead of applying the effect now.
    pub replayed: bool,
}
