//! What several test files need: the lab's key and request, and what a migrated ledger must do.

use retrykey::{Error, Key, Ledger, Receipt, Request};

pub fn key(text: &str) -> Key {
    Key::new(text).expect("valid key")
}

pub fn request(units: u64) -> Request {
    Request::new("convert-document", units).expect("valid request")
}

/// The version-1 operations the schema tests write, `op-1` (7 units) and `op-2` (5 units).
pub fn v1_operations() -> [(Key, Request); 2] {
    [(key("op-1"), request(7)), (key("op-2"), request(5))]
}

/// A ledger migrated from [`v1_operations`] replays both receipts unchanged, refuses a changed
/// request, holds no new effect, and numbers the next operation after the migrated ones.
pub fn migrated_ledger_replays(ledger: &impl Ledger) {
    let replay = |operation, total| Receipt {
        operation,
        total,
        replayed: true,
    };
    assert_eq!(ledger.apply(&key("op-1"), &request(7)), Ok(replay(1, 7)));
    assert_eq!(ledger.apply(&key("op-2"), &request(5)), Ok(replay(2, 12)));
    assert_eq!(
        ledger.apply(&key("op-1"), &request(8)),
        Err(Error::Conflict)
    );
    // No new effect: the total and the records are the migrated ones.
    assert_eq!((ledger.total(), ledger.records()), (Ok(12), Ok(2)));
    // Numbering continues after the migrated operations.
    let next = ledger.apply(&key("op-3"), &request(1));
    assert_eq!(
        next.map(|receipt| (receipt.operation, receipt.total)),
        Ok((3, 13))
    );
}
