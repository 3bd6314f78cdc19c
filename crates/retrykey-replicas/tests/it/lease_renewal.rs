//! A running attempt renews its lease, so that no other replica takes a live key over; and it
//! renews only within `max_hold`, so that a stuck attempt cannot hold a key forever.
//!
//! Two stores on one SQLite file stand for two replicas. Real time passes: the lease is one
//! second and every wait has at least a second of margin either way.

use std::time::Duration;

use retrykey_http::{Entries, EntryId, Fingerprint, IdempotencyKey, Lookup, Reserve, Scope, Token};
use retrykey_replicas::{Lease, Options, SqliteEntries};

fn entry(key: &str) -> (EntryId, Fingerprint) {
    let key = IdempotencyKey::parse(key.as_bytes()).expect("a valid key");
    (
        EntryId::new(&Scope::Anonymous, &key),
        Fingerprint::from_bytes([7; 32]),
    )
}

fn lease(max_hold: Duration) -> Options {
    Options {
        lease: Lease {
            duration: Duration::from_secs(1),
            max_hold,
        },
        ..Options::default()
    }
}

/// Replica A reserves a key; replica B opens the same file.
async fn reserved(options: Options, key: &str) -> (SqliteEntries, SqliteEntries, EntryId, Token) {
    let a = SqliteEntries::throwaway(options.clone()).expect("replica A's store");
    let b = SqliteEntries::open(a.path(), options).expect("replica B's store, same file");
    let (id, fingerprint) = entry(key);
    let Ok(Reserve::Reserved(token)) = a.reserve(&id, &fingerprint).await else {
        panic!("A reserves a fresh key");
    };
    (a, b, id, token)
}

// Three leases later, a key whose attempt still runs is still in flight for everyone else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_attempt_keeps_its_key() {
    let (_a, b, id, token) = reserved(lease(Duration::from_secs(600)), "renewed").await;
    tokio::time::sleep(Duration::from_secs(3)).await;

    let lookup = b.lookup(&id).await.expect("B looks");
    assert!(matches!(lookup, Lookup::InFlight { .. }), "{lookup:?}");
    let (_, fingerprint) = entry("renewed");
    assert_eq!(
        b.reserve(&id, &fingerprint).await.ok(),
        Some(Reserve::Taken)
    );
    let holder = b.holder(&id).await.expect("B reads").expect("a record");
    assert_eq!((holder.token, holder.finished), (token, false));
}

// Past `max_hold` the renewals stop, the lease lapses, and another replica takes the key over
// with a higher token; the old attempt's answer is then refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renewals_stop_at_max_hold() {
    let (a, b, id, token) = reserved(lease(Duration::from_secs(2)), "stuck").await;
    tokio::time::sleep(Duration::from_secs(4)).await;

    let (_, fingerprint) = entry("stuck");
    let Ok(Reserve::Reserved(taken)) = b.reserve(&id, &fingerprint).await else {
        panic!("B takes over a key held past max_hold");
    };
    assert!(
        taken > token,
        "the takeover's token {taken:?} is above {token:?}"
    );
    let late = a
        .complete(&id, token, retrykey_http::payments::created(1))
        .await;
    assert!(
        matches!(late, Err(retrykey_http::Error::NotOwner)),
        "{late:?}"
    );
    let holder = b.holder(&id).await.expect("B reads").expect("a record");
    assert_eq!((holder.token, holder.finished), (taken, false));
}
