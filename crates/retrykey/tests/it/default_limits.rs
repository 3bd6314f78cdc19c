//! The two numbers on the lab's card, pinned by name: a default store holds 64 records and
//! commits at most 1,000,000 units. The book, the story binary and the variants all quote them.

use retrykey::{
    DEFAULT_MAX_RECORDS, DEFAULT_MAX_UNITS, Error, Key, Ledger, Limits, Request, Store,
};

fn key(n: usize) -> Key {
    Key::new(format!("op-{n}")).expect("a valid key")
}

fn request(units: u64) -> Request {
    Request::new("convert-document", units).expect("a valid request")
}

#[test]
fn default_store_holds_64_records() {
    assert_eq!(DEFAULT_MAX_RECORDS, 64);
    let store = Store::new();
    assert_eq!(store.limits().max_records, 64);
    for n in 1..=64 {
        let receipt = store.apply(&key(n), &request(1)).expect("room for 64");
        assert_eq!(receipt.operation, n as u64);
    }
    assert_eq!(
        store.apply(&key(65), &request(1)),
        Err(Error::Capacity { max_records: 64 })
    );
    // The 65th changed nothing, and the 64 stored operations still replay.
    assert_eq!((store.total(), store.records()), (Ok(64), Ok(64)));
    assert!(
        store
            .apply(&key(64), &request(1))
            .expect("a replay")
            .replayed
    );
}

#[test]
fn default_store_commits_at_most_1_000_000_units() {
    assert_eq!(DEFAULT_MAX_UNITS, 1_000_000);
    assert_eq!(Limits::default().max_units, 1_000_000);
    let store = Store::new();
    store
        .apply(&key(1), &request(999_999))
        .expect("below the ceiling");
    assert_eq!(
        store.apply(&key(2), &request(2)),
        Err(Error::Ceiling {
            units: 2,
            total: 999_999,
            max_units: 1_000_000,
        })
    );
    assert_eq!((store.total(), store.records()), (Ok(999_999), Ok(1)));
    let exact = store
        .apply(&key(3), &request(1))
        .expect("exactly the ceiling");
    assert_eq!((exact.operation, exact.total), (2, 1_000_000));
    assert_eq!(store.total(), Ok(1_000_000));
}
