//! The foreign call's key: one per operation and call, the same on every attempt, and nothing
//! of the operation's own key in it.

use retrykey_foreign::{FOREIGN_KEY_PREFIX, foreign_key};
use retrykey_http::{EntryId, IdempotencyKey, Scope};

fn operation(scope: &Scope, key: &str) -> EntryId {
    let key = IdempotencyKey::parse(key.as_bytes()).expect("a valid key");
    EntryId::new(scope, &key)
}

#[test]
fn one_operation_one_call_one_key() {
    let checkout = operation(&Scope::Anonymous, "order-7");
    let first = foreign_key(&checkout, "charge");
    assert_eq!(first, foreign_key(&checkout, "charge"));
    assert!(first.as_str().starts_with(FOREIGN_KEY_PREFIX), "{first:?}");
    assert_eq!(first.as_str().len(), FOREIGN_KEY_PREFIX.len() + 32);
    assert!(!first.as_str().contains("order-7"));
}

#[test]
fn another_operation_call_or_caller_is_another_key() {
    let checkout = operation(&Scope::Anonymous, "order-7");
    let charge = foreign_key(&checkout, "charge");
    let others = [
        foreign_key(&operation(&Scope::Anonymous, "order-8"), "charge"),
        foreign_key(&checkout, "refund"),
        foreign_key(
            &operation(&Scope::Caller("alice".into()), "order-7"),
            "charge",
        ),
    ];
    for other in others {
        assert_ne!(other, charge);
    }
}
