//! Costs of the ledger's paths, each beside its physical baseline measured in the same run:
//! one uncontended mutex lock plus one hash-map lookup (replay) or lookup-and-insert (new).
//!
//! `just bench` (about a minute). Goal: new operation and replay within about 2x their baseline.

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::{Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use retrykey::{Key, Ledger, Limits, Request, Store};

fn keys(n: u64) -> Vec<Key> {
    (0..n)
        .map(|i| Key::new(format!("op-{i}")).expect("valid"))
        .collect()
}

fn unbounded() -> Limits {
    Limits {
        max_records: usize::MAX,
        max_units: u64::MAX,
    }
}

fn new_operation(c: &mut Criterion) {
    let mut group = c.benchmark_group("new_operation");
    let request = Request::new("convert-document", 7).expect("valid");
    group.bench_function("ledger", |b| {
        b.iter_custom(|iters| {
            let (store, keys) = (Store::with_limits(unbounded()), keys(iters));
            let start = Instant::now();
            for key in &keys {
                black_box(store.apply(key, &request).expect("applies"));
            }
            start.elapsed()
        })
    });
    group.bench_function("baseline_lock_lookup_insert", |b| {
        b.iter_custom(|iters| {
            let (map, keys) = (Mutex::new(HashMap::<Key, u64>::new()), keys(iters));
            let start = Instant::now();
            for key in &keys {
                let mut map = map.lock().expect("not poisoned");
                if map.get(key).is_none() {
                    map.insert(key.clone(), 7);
                }
                black_box(&map);
            }
            start.elapsed()
        })
    });
    group.finish();
}

fn replay_and_conflict(c: &mut Criterion) {
    let mut group = c.benchmark_group("replay");
    let (store, key) = (Store::new(), Key::new("op-1").expect("valid"));
    let request = Request::new("convert-document", 7).expect("valid");
    let changed = Request::new("convert-document", 8).expect("valid");
    store.apply(&key, &request).expect("applies");
    group.bench_function("ledger", |b| {
        b.iter(|| black_box(store.apply(&key, &request)))
    });
    group.bench_function("conflict", |b| {
        b.iter(|| black_box(store.apply(&key, &changed)))
    });
    let map = Mutex::new(HashMap::from([(key.clone(), 7u64)]));
    group.bench_function("baseline_lock_lookup", |b| {
        b.iter(|| black_box(map.lock().expect("not poisoned").get(&key).copied()))
    });
    group.finish();
}

fn burst(c: &mut Criterion) {
    let mut group = c.benchmark_group("burst");
    group.sample_size(20);
    let request = Request::new("convert-document", 7).expect("valid");
    let key = Key::new("op-1").expect("valid");
    group.bench_function("64_threads_one_key", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let (store, barrier) = (Store::new(), Barrier::new(65));
                thread::scope(|scope| {
                    let callers: Vec<_> = (0..64)
                        .map(|_| {
                            scope.spawn(|| {
                                barrier.wait();
                                black_box(store.apply(&key, &request).expect("answered"));
                            })
                        })
                        .collect();
                    // Timed from the release of all 64 callers until the last one is done.
                    barrier.wait();
                    let start = Instant::now();
                    for caller in callers {
                        caller.join().expect("caller");
                    }
                    total += start.elapsed();
                });
            }
            total
        })
    });
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = new_operation, replay_and_conflict, burst
}
criterion_main!(benches);
