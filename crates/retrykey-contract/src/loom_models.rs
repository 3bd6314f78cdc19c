//! Loom models: every interleaving of two or three callers, explored exhaustively.
//!
//! Only under `--cfg loom`, where the ledger's `retrykey::sync` shim locks with loom's mutex.

use loom::sync::Arc;
use loom::thread;
use retrykey::{Error, Ledger, Limits, Receipt};

use crate::fixtures::{key, receipt, request, stored};

// ANCHOR: same_key
/// `callers` threads apply the same operation: one effect, one original, the rest replays.
pub fn same_key<L: Ledger + 'static>(callers: usize, make: fn(Limits) -> L) {
    loom::model(move || {
        let ledger = Arc::new(make(Limits::default()));
        let handles: Vec<_> = (0..callers)
            .map(|_| {
                let ledger = Arc::clone(&ledger);
                thread::spawn(move || ledger.apply(&key("op-1"), &request("convert", 7)))
            })
            .collect();
        let replies: Vec<Receipt> = handles
            .into_iter()
            .map(|handle| handle.join().expect("caller").expect("answered"))
            .collect();

        assert_eq!(stored(&*ledger), (7, 1), "one effect, one record");
        assert_eq!(
            replies.iter().filter(|r| !r.replayed).count(),
            1,
            "one original"
        );
        for reply in replies {
            assert_eq!(
                Receipt {
                    replayed: false,
                    ..reply
                },
                receipt(1, 7)
            );
        }
    });
}
// ANCHOR_END: same_key

/// Two threads use one key with different requests: one applies, the other conflicts.
pub fn differing_requests<L: Ledger + 'static>(make: fn(Limits) -> L) {
    loom::model(move || {
        let ledger = Arc::new(make(Limits::default()));
        let handles: Vec<_> = [7, 8]
            .into_iter()
            .map(|units| {
                let ledger = Arc::clone(&ledger);
                thread::spawn(move || ledger.apply(&key("op-1"), &request("convert", units)))
            })
            .collect();
        let replies: Vec<Result<Receipt, Error>> = handles
            .into_iter()
            .map(|handle| handle.join().expect("caller"))
            .collect();

        let applied: Vec<&Receipt> = replies.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(applied.len(), 1, "exactly one request is applied");
        assert!(
            replies.iter().any(|r| *r == Err(Error::Conflict)),
            "the other conflicts"
        );
        assert_eq!(stored(&*ledger), (applied[0].total, 1));
    });
}

/// Two threads with distinct keys: both effects count, with operation numbers 1 and 2.
pub fn distinct_keys<L: Ledger + 'static>(make: fn(Limits) -> L) {
    loom::model(move || {
        let ledger = Arc::new(make(Limits::default()));
        let handles: Vec<_> = ["op-1", "op-2"]
            .into_iter()
            .map(|name| {
                let ledger = Arc::clone(&ledger);
                thread::spawn(move || ledger.apply(&key(name), &request("convert", 7)))
            })
            .collect();
        let mut replies: Vec<Receipt> = handles
            .into_iter()
            .map(|handle| handle.join().expect("caller").expect("answered"))
            .collect();

        replies.sort_by_key(|r| r.operation);
        assert_eq!(replies, vec![receipt(1, 7), receipt(2, 14)]);
        assert_eq!(stored(&*ledger), (14, 2));
    });
}
