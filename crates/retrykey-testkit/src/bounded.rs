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

/// Polls `condition` every few milliseconds until it holds, and panics naming `what` if it
/// still does not after `within`: a test's wait that never ends is a hang, and must fail as one.
pub async fn wait_until<F: Future<Output = bool>>(
    what: &str,
    within: Duration,
    mut condition: impl FnMut() -> F,
) {
    let deadline = tokio::time::Instant::now() + within;
    while !condition().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "gave up after {within:?} waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
