//! What every check builds from: valid keys and requests, expected receipts, and the ledger's
//! stored state read without applying anything.
//!
//! A leaf: it uses only the core crate, so the checks, the stress bursts and the loom models can
//! all share it without importing one another.

use retrykey::{Key, Ledger, Limits, Receipt, Request};

/// A valid key; the checks only use literals that pass validation.
pub fn key(text: &str) -> Key {
    Key::new(text).expect("the checks use valid keys")
}

/// A valid request.
pub fn request(job: &str, units: u64) -> Request {
    Request::new(job, units).expect("the checks use valid requests")
}

/// A receipt as it was first delivered.
pub fn receipt(operation: u64, total: u64) -> Receipt {
    Receipt {
        operation,
        total,
        replayed: false,
    }
}

/// The ledger's stored state, read without applying anything: (total, records).
pub fn stored<L: Ledger>(ledger: &L) -> (u64, usize) {
    (
        ledger.total().expect("reading the total"),
        ledger.records().expect("reading the record count"),
    )
}

/// The receipt stored for `key`, read without applying anything.
pub fn stored_receipt<L: Ledger>(ledger: &L, key: &Key) -> Option<Receipt> {
    ledger.receipt(key).expect("reading a receipt")
}

/// Limits with the given bounds.
pub fn limits(max_records: usize, max_units: u64) -> Limits {
    Limits {
        max_records,
        max_units,
    }
}
