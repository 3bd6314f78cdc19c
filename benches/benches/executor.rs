//! The executor's cost per attempt: one operation through `Client::run` against calling the
//! attempt function directly, for an attempt that succeeds at once and for one that fails twice.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use retrykey_client::{Attempt, Client, Failure, Policy, RetryQuota, StatusFailure, Success};

fn attempt_fn(
    fail_first: u32,
) -> impl FnMut(Attempt) -> std::future::Ready<Result<Success<u64>, Failure>> {
    move |attempt: Attempt| {
        std::future::ready(if attempt.number <= fail_first {
            Err(Failure::Status(StatusFailure::new(503, "unavailable")))
        } else {
            Ok(Success {
                value: u64::from(attempt.number),
                replayed: false,
            })
        })
    }
}

fn executor(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    // Zero-length waits, so the figures measure the executor and not the backoff sleeps.
    let policy = Policy::builder()
        .base(Duration::ZERO)
        .cap(Duration::ZERO)
        .build()
        .expect("policy");
    let client = Client::builder(policy)
        .seed(1)
        .quota(Arc::new(RetryQuota::unlimited()))
        .build();

    let mut group = c.benchmark_group("executor");
    group.bench_function("direct call (baseline)", |b| {
        let mut attempt = attempt_fn(0);
        let key = client.new_key();
        let budget = retrykey_client::Budget::start(&policy);
        b.iter(|| {
            runtime.block_on(attempt(Attempt {
                key: key.clone(),
                number: 1,
                budget: budget.clone(),
            }))
        });
    });
    group.bench_function("run, success on attempt 1", |b| {
        b.iter(|| runtime.block_on(client.run(attempt_fn(0))));
    });
    group.bench_function("run, success on attempt 3", |b| {
        b.iter(|| black_box(runtime.block_on(client.run(attempt_fn(2)))));
    });
    group.finish();
}

criterion_group!(benches, executor);
criterion_main!(benches);
