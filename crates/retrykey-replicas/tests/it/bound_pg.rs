//! The PostgreSQL store's entry bound is exact across replicas, although its room is split over
//! several rows. Ignored, not passed, when RETRYKEY_PG_URL is not set.

use retrykey_durable_checks::admin::url;
use retrykey_http::{Entries, EntryId, Fingerprint, IdempotencyKey, Reserve, Scope, StoreLimits};
use retrykey_replicas::{PgEntries, StoreOptions};

const BOUND: usize = 10;

fn entry(n: usize) -> EntryId {
    let key = IdempotencyKey::parse(format!("k-{n}").as_bytes()).expect("a key");
    EntryId::new(&Scope::Anonymous, &key)
}

// Two replicas racing 64 fresh keys into a store bounded at 10 reserve exactly 10 of them,
// and after 3 releases exactly 3 more.
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_replicas_never_pass_the_entry_bound() {
    let options = StoreOptions {
        limits: StoreLimits {
            max_entries: BOUND,
            ..StoreLimits::default()
        },
        ..StoreOptions::default()
    };
    let first = PgEntries::throwaway(&url(), options.clone())
        .await
        .expect("a store");
    let second = PgEntries::connect_in_schema(&url(), first.schema(), options)
        .await
        .expect("a second replica");
    let fingerprint = Fingerprint::from_bytes([7; 32]);
    let race = |range: std::ops::Range<usize>| {
        let tasks: Vec<_> = range
            .map(|n| {
                let store = if n % 2 == 0 {
                    first.clone()
                } else {
                    second.clone()
                };
                tokio::spawn(async move {
                    let reserve = store.reserve(&entry(n), &fingerprint).await;
                    (n, reserve.expect("the store answers"))
                })
            })
            .collect();
        async move {
            let mut reserved = Vec::new();
            for task in tasks {
                match task.await.expect("the task") {
                    (n, Reserve::Reserved(token)) => reserved.push((n, token)),
                    (_, Reserve::Full) => {}
                    (n, other) => panic!("key {n}: {other:?}"),
                }
            }
            reserved
        }
    };
    let reserved = race(0..64).await;
    assert_eq!(reserved.len(), BOUND, "reserved: {reserved:?}");
    assert_eq!(first.entries().await.expect("entries"), BOUND as u64);

    for &(n, token) in &reserved[..3] {
        first.release(&entry(n), token).await.expect("released");
    }
    let more = race(100..164).await;
    assert_eq!(more.len(), 3, "reserved after 3 releases: {more:?}");
    assert_eq!(second.entries().await.expect("entries"), BOUND as u64);
}
