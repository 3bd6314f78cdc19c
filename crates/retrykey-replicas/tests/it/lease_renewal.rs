//! A running attempt renews its lease, so that no other replica takes a live key over; and it
//! renews only within `max_hold`, so that a stuck attempt cannot hold a key forever.
//!
//! Two stores on one SQLite file stand for two replicas, and the lease is one second. The
//! tests decide by the lease end the file records, not by how long they slept: a busy machine
//! may pause either replica at any point without changing the verdict.

use std::time::Duration;

use retrykey_http::{Entries, EntryId, Fingerprint, IdempotencyKey, Lookup, Reserve, Scope, Token};
use retrykey_program::Clock;
use retrykey_replicas::{Lease, SqliteEntries, StoreOptions};
use retrykey_testkit::wait_until;

const LEASE: Duration = Duration::from_secs(1);
/// A wait for a condition longer than this is a hang, not a slow machine.
const MINUTE: Duration = Duration::from_secs(60);

fn entry(key: &str) -> (EntryId, Fingerprint) {
    let key = IdempotencyKey::parse(key.as_bytes()).expect("a valid key");
    (
        EntryId::new(&Scope::Anonymous, &key),
        Fingerprint::from_bytes([7; 32]),
    )
}

fn lease(max_hold: Duration, clock: Clock) -> StoreOptions {
    StoreOptions {
        lease: Lease {
            duration: LEASE,
            max_hold,
        },
        clock,
        ..StoreOptions::default()
    }
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).expect("a short duration")
}

/// Replica A reserves a key with `a`; replica B opens the same file with `b`.
async fn reserved(
    a: StoreOptions,
    b: StoreOptions,
    key: &str,
) -> (SqliteEntries, SqliteEntries, EntryId, Token) {
    let a = SqliteEntries::throwaway(a).expect("replica A's store");
    let b = SqliteEntries::open(a.path(), b).expect("replica B's store, same file");
    let (id, fingerprint) = entry(key);
    let Ok(Reserve::Reserved(token)) = a.reserve(&id, &fingerprint).await else {
        panic!("A reserves a fresh key");
    };
    (a, b, id, token)
}

/// When the key's lease ends, as the file records it (ms since the epoch).
async fn lease_end(store: &SqliteEntries, id: &EntryId) -> i64 {
    let holder = store.holder(id).await.expect("B reads").expect("a record");
    holder.lease_until_ms.expect("a key in flight has a lease")
}

// Three leases later, a key whose attempt still runs is still in flight for everyone else.
// A's clock runs a minute ahead of B's, so a renewal is live for B for a minute: a pause
// between a renewal and B's look cannot lapse it. That A renews is read from the file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_attempt_keeps_its_key() {
    let (a, b) = (
        lease(
            Duration::from_secs(600),
            Clock::ahead(Duration::from_secs(60)),
        ),
        lease(Duration::from_secs(600), Clock::system()),
    );
    let (_a, b, id, token) = reserved(a, b, "renewed").await;
    let first = lease_end(&b, &id).await;
    wait_until(
        "A's renewals moved its lease end three leases on",
        MINUTE,
        || async { lease_end(&b, &id).await >= first + 3 * millis(LEASE) },
    )
    .await;

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
// with a higher token; the old attempt's answer is then refused. B looks once its clock is past
// both `max_hold` after the first lease end and the lease end the file records: the lapse is
// read, not slept for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renewals_stop_at_max_hold() {
    let max_hold = Duration::from_secs(2);
    let options = || lease(max_hold, Clock::system());
    let (a, b, id, token) = reserved(options(), options(), "stuck").await;
    let past_max_hold = lease_end(&b, &id).await + millis(max_hold);
    wait_until("the lease lapsed past max_hold", MINUTE, || async {
        let now = Clock::system().now_ms();
        now > past_max_hold && now > lease_end(&b, &id).await
    })
    .await;

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
