// Mirrored by labs/capacity-before-lookup, labs/evict-oldest, labs/live-total-receipt, labs/no-conflict-check, labs/no-receipt, labs/receipt-before-effect, labs/split-critical-section: see labs/README.md before changing this file.
//! The in-memory ledger: one mutex guards the total, the key lookup and the receipt insertion.

use std::collections::HashMap;

use crate::sync::{Mutex, lock};
use crate::{Error, Key, Ledger, Limits, Receipt, Request};

// ANCHOR: state
/// An in-memory [`Ledger`]: the effect and its receipt change together in one critical section.
///
/// It lives as long as the process does; durability is the job of a later stage.
#[derive(Debug, Default)]
pub struct Store {
    limits: Limits,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    total: u64,
    records: HashMap<Key, Record>,
}

/// What is kept per key: the request it was first used with, and the receipt it earned.
#[derive(Debug)]
struct Record {
    request: Request,
    receipt: Receipt,
}
// ANCHOR_END: state

impl Store {
    /// An empty store with the default [`Limits`] (64 records, 1,000,000 units).
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty store with the given limits.
    pub fn with_limits(limits: Limits) -> Self {
        Self {
            limits,
            state: Mutex::default(),
        }
    }

    /// The limits this store enforces.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The request `key` was first used with: what a retry under this key must repeat.
    pub fn recorded_request(&self, key: &Key) -> Option<Request> {
        lock(&self.state)
            .records
            .get(key)
            .map(|record| record.request.clone())
    }
}

impl Ledger for Store {
    // ANCHOR: apply
    fn apply(&self, key: &Key, request: &Request) -> Result<Receipt, Error> {
        // One critical section from the lookup to the insertion: no other caller can slip in
        // between "this key is new" and "this key has a receipt".
        let mut state = lock(&self.state);

        // The lookup comes first, so a replay is answered even when the ledger is full.
        if let Some(record) = state.records.get(key) {
            if record.request != *request {
                return Err(Error::Conflict);
            }
            return Ok(record.receipt.replay());
        }

        // A new operation: capacity, then the ceiling. `total` is what the effect will make.
        let records = state.records.len() as u64;
        // NEGATIVE: the receipt is recorded before the limits are checked. When the ceiling
        // then rejects the effect, the record stays, and a retry reports success for work that
        // never happened.
        let receipt = Receipt {
            operation: records + 1,
            total: state.total.saturating_add(request.units()),
            replayed: false,
        };
        state.records.insert(
            key.clone(),
            Record {
                request: request.clone(),
                receipt,
            },
        );
        let total = self.limits.admit(records, state.total, request.units())?;
        state.total = total;
        Ok(receipt)
    }

    // ANCHOR_END: apply
    fn total(&self) -> Result<u64, Error> {
        Ok(lock(&self.state).total)
    }

    fn records(&self) -> Result<usize, Error> {
        Ok(lock(&self.state).records.len())
    }

    fn receipt(&self, key: &Key) -> Result<Option<Receipt>, Error> {
        Ok(lock(&self.state)
            .records
            .get(key)
            .map(|record| record.receipt))
    }
}
