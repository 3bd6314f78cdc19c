//! One check on a runtime of its own, bounded in time, as every checks crate runs its checks.

use std::future::Future;
use std::time::Duration;

/// Runs `check` to its end on a fresh two-thread runtime, and panics (failing the check) if it
/// takes longer than `limit`: a hang fails instead of blocking the test run forever.
///
/// A runtime per check keeps one check's stray tasks from outliving it into the next.
pub fn run_check_within(limit: Duration, check: impl Future<Output = ()>) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        tokio::time::timeout(limit, check)
            .await
            .unwrap_or_else(|_| panic!("the check did not finish within {limit:?}"));
    });
}
