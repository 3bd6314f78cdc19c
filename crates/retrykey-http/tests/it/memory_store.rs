//! The in-memory store's contract: atomic reservation, ownership, waking waiters, bounds, expiry.

use std::sync::Arc;
use std::time::Duration;

use http::{Method, Response, Uri};
use retrykey_http::{
    AttemptEnd, Entries, EntryId, Error, Fingerprint, IdempotencyKey, Lookup, MemoryEntries,
    Reserve, Scope, StoreLimits, StoredResponse, Token,
};

fn id(key: &str) -> EntryId {
    EntryId::new(
        &Scope::Anonymous,
        &IdempotencyKey::parse(key.as_bytes()).unwrap(),
    )
}

fn fingerprint() -> Fingerprint {
    Fingerprint::of(
        &Method::POST,
        &Uri::from_static("/p"),
        &Scope::Anonymous,
        None,
        b"x",
    )
}

fn response(body: &'static str) -> StoredResponse {
    let (parts, ()) = Response::builder()
        .status(201)
        .body(())
        .unwrap()
        .into_parts();
    StoredResponse::whole(&parts, body.as_bytes())
}

async fn reserve(store: &MemoryEntries, key: &str) -> Reserve {
    store.reserve(&id(key), &fingerprint()).await.unwrap()
}

/// Reserves `key`, which must be free, and returns the reservation's token.
async fn reserved(store: &MemoryEntries, key: &str) -> Token {
    match reserve(store, key).await {
        Reserve::Reserved(token) => token,
        other => panic!("reserving {key:?}: {other:?}"),
    }
}

// A reserved key cannot be reserved again; a different key can.
#[tokio::test]
async fn a_key_is_reserved_once() {
    let store = MemoryEntries::default();
    assert!(matches!(reserve(&store, "a").await, Reserve::Reserved(_)));
    assert_eq!(reserve(&store, "a").await, Reserve::Taken);
    assert!(matches!(reserve(&store, "b").await, Reserve::Reserved(_)));
    assert_eq!(store.len(), 2);
}

// Only the holder of the reservation can complete or release it; a stranger changes nothing.
#[tokio::test]
async fn completion_and_release_need_the_token() {
    let store = MemoryEntries::default();
    let token = reserved(&store, "a").await;
    let stranger = Token(token.0 + 100);
    assert!(matches!(
        store.complete(&id("a"), stranger, response("x")).await,
        Err(Error::NotOwner)
    ));
    assert!(matches!(
        store.release(&id("a"), stranger).await,
        Err(Error::NotOwner)
    ));
    assert!(matches!(
        store.lookup(&id("a")).await.unwrap(),
        Lookup::InFlight { .. }
    ));
    assert_eq!(store.bytes(), 0);
    store
        .complete(&id("a"), token, response("x"))
        .await
        .unwrap();
    assert!(matches!(
        store.lookup(&id("a")).await.unwrap(),
        Lookup::Done { .. }
    ));
    assert!(store.bytes() > 0);
}

// Waiters learn the outcome: the stored answer on completion, "released" on release.
#[tokio::test]
async fn waiters_are_woken_with_the_outcome() {
    let store = Arc::new(MemoryEntries::default());
    let a = reserved(&store, "a").await;
    let b = reserved(&store, "b").await;
    let Lookup::InFlight { wait: wait_a, .. } = store.lookup(&id("a")).await.unwrap() else {
        panic!()
    };
    let Lookup::InFlight { wait: wait_b, .. } = store.lookup(&id("b")).await.unwrap() else {
        panic!()
    };
    store.complete(&id("a"), a, response("done")).await.unwrap();
    store.release(&id("b"), b).await.unwrap();
    match wait_a.await {
        AttemptEnd::Completed(response) => assert_eq!(response.body(), b"done"),
        AttemptEnd::Released | AttemptEnd::Lapsed => panic!("a completed"),
    }
    assert!(matches!(wait_b.await, AttemptEnd::Released));
    assert!(matches!(
        store.lookup(&id("b")).await.unwrap(),
        Lookup::Absent
    ));
    assert_eq!(store.len(), 1);
}

// At its bound the store refuses new keys, keeps what it has, and still answers lookups.
#[tokio::test]
async fn a_full_store_refuses_and_keeps() {
    let store = MemoryEntries::new(StoreLimits {
        max_entries: 2,
        ..StoreLimits::default()
    });
    let a = reserved(&store, "a").await;
    assert!(matches!(reserve(&store, "b").await, Reserve::Reserved(_)));
    store.complete(&id("a"), a, response("kept")).await.unwrap();
    assert_eq!(reserve(&store, "c").await, Reserve::Full);
    assert_eq!(store.len(), 2);
    assert!(matches!(
        store.lookup(&id("a")).await.unwrap(),
        Lookup::Done { .. }
    ));
    assert!(matches!(
        store.lookup(&id("c")).await.unwrap(),
        Lookup::Absent
    ));
}

// The byte budget counts stored answers, and refuses new keys once spent.
#[tokio::test]
async fn the_byte_budget_is_enforced() {
    let store = MemoryEntries::new(StoreLimits {
        max_bytes: 64,
        ..StoreLimits::default()
    });
    let a = reserved(&store, "a").await;
    store
        .complete(&id("a"), a, response("a body that fills the budget"))
        .await
        .unwrap();
    assert!(store.bytes() >= 64);
    assert_eq!(reserve(&store, "b").await, Reserve::Full);
}

// Each finished entry is counted with its own overhead (its map slot, record and header map,
// 1,024 bytes), not only its answer's bytes, so that the budget bounds the memory really held:
// a budget of 2,500 bytes holds three tiny answers (about 1,090 bytes each as counted, checked
// before each reservation) and refuses a fourth, evicting none.
#[tokio::test]
async fn each_entry_counts_its_own_overhead_against_the_budget() {
    let store = MemoryEntries::new(StoreLimits {
        max_bytes: 2_500,
        ..StoreLimits::default()
    });
    let small = response("x").size();
    for key in ["a", "b", "c"] {
        let token = reserved(&store, key).await;
        store
            .complete(&id(key), token, response("x"))
            .await
            .unwrap();
    }
    assert_eq!(store.bytes(), 3 * (small + 1024));
    assert_eq!(reserve(&store, "d").await, Reserve::Full);
    assert_eq!(store.len(), 3, "no stored answer was evicted");
}

// Finished entries past retention are swept and their bytes returned; running ones never are.
#[tokio::test]
async fn expired_entries_are_swept_but_running_ones_stay() {
    let store = MemoryEntries::new(StoreLimits {
        retention: Duration::ZERO,
        ..StoreLimits::default()
    });
    let a = reserved(&store, "a").await;
    assert!(matches!(
        reserve(&store, "running").await,
        Reserve::Reserved(_)
    ));
    store.complete(&id("a"), a, response("x")).await.unwrap();
    assert_eq!(store.sweep(), 1);
    assert_eq!((store.len(), store.bytes()), (1, 0));
    assert!(matches!(
        store.lookup(&id("a")).await.unwrap(),
        Lookup::Absent
    ));
    assert!(matches!(
        store.lookup(&id("running")).await.unwrap(),
        Lookup::InFlight { .. }
    ));
}

// The store reports the bounds it was given, and whether it holds anything at all.
#[tokio::test]
async fn the_store_reports_its_limits_and_emptiness() {
    let limits = StoreLimits {
        max_entries: 3,
        max_bytes: 1_000,
        retention: Duration::from_secs(60),
    };
    let store = MemoryEntries::new(limits);
    assert_eq!(store.limits(), limits);
    assert!(store.is_empty());
    reserved(&store, "a").await;
    assert!(!store.is_empty());
    assert_eq!(store.len(), 1);
}

// A finished record past its retention reads as absent, and its key can be reserved afresh,
// even before any sweep has removed it: here three expired records wait in the queue and a
// reservation sweeps only two, so the third is still held when its own key comes back.
#[tokio::test]
async fn an_expired_record_is_gone_for_callers_before_it_is_swept() {
    let store = MemoryEntries::new(StoreLimits {
        retention: Duration::ZERO,
        ..StoreLimits::default()
    });
    let mut tokens = Vec::new();
    for key in ["a", "b", "c"] {
        tokens.push(reserved(&store, key).await);
    }
    for (key, token) in ["a", "b", "c"].into_iter().zip(tokens) {
        store
            .complete(&id(key), token, response("x"))
            .await
            .unwrap();
    }
    assert!(matches!(
        store.lookup(&id("c")).await.unwrap(),
        Lookup::Absent
    ));
    assert_eq!(store.len(), 3, "nothing was swept yet");
    // This reservation sweeps "a" and "b", then finds "c" expired and takes the key over.
    assert!(matches!(reserve(&store, "c").await, Reserve::Reserved(_)));
    assert_eq!((store.len(), store.bytes()), (1, 0));
    assert!(matches!(
        store.lookup(&id("c")).await.unwrap(),
        Lookup::InFlight { .. }
    ));
}

// Each reservation gets a new token, so the owner of an earlier reservation of the same key
// cannot release the current one.
#[tokio::test]
async fn a_stale_token_cannot_release_a_new_reservation() {
    let store = MemoryEntries::default();
    let first = reserved(&store, "a").await;
    store.release(&id("a"), first).await.unwrap();
    let second = reserved(&store, "a").await;
    assert_ne!(first, second);
    let _ = store.release(&id("a"), first).await;
    assert!(matches!(
        store.lookup(&id("a")).await.unwrap(),
        Lookup::InFlight { .. }
    ));
    assert_eq!(store.len(), 1);
}

// A store dropped with a first attempt still running tells its waiters the attempt was
// released, so that a duplicate never waits on an attempt that can no longer end.
#[tokio::test]
async fn waiters_of_a_dropped_store_are_told_released() {
    let store = Arc::new(MemoryEntries::default());
    let _token = reserved(&store, "a").await;
    let Lookup::InFlight { wait, .. } = store.lookup(&id("a")).await.unwrap() else {
        panic!("a is running")
    };
    drop(store);
    let end = tokio::time::timeout(Duration::from_secs(5), wait)
        .await
        .expect("the waiter is woken when the store goes away");
    assert!(matches!(end, AttemptEnd::Released));
}
