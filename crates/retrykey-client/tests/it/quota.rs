//! The retry quota: prices, refunds, and one bucket shared by the operations of one client.

use std::sync::Arc;

use retrykey_client::{Client, Failure, Policy, RetryQuota, Success};

// A retry after a timeout costs more than one after another failure.
#[test]
fn timeouts_cost_more() {
    let quota = RetryQuota::default();
    assert_eq!(
        quota.try_spend(&Failure::Refused("refused".into())),
        Some(5)
    );
    assert_eq!(quota.try_spend(&Failure::TimedOut), Some(10));
    assert_eq!(quota.tokens(), 500 - 15);
}

// When the bucket cannot pay, nothing is taken from it.
#[test]
fn an_unpaid_retry_takes_nothing() {
    let quota = RetryQuota::new(7, 5, 10, 1);
    assert_eq!(quota.try_spend(&Failure::TimedOut), None);
    assert_eq!(quota.tokens(), 7);
    assert_eq!(quota.try_spend(&Failure::Lost("reset".into())), Some(5));
    assert_eq!(quota.try_spend(&Failure::Lost("reset".into())), None);
    assert_eq!(quota.tokens(), 2);
}

// Refunds never fill the bucket past its capacity.
#[test]
fn refunds_stop_at_capacity() {
    let quota = RetryQuota::new(10, 5, 10, 1);
    quota.on_success(None);
    assert_eq!(quota.tokens(), 10);
    quota.try_spend(&Failure::TimedOut);
    quota.on_success(Some(10));
    assert_eq!(quota.tokens(), 10);
}

// Two clients given the same quota draw from one bucket.
#[tokio::test(start_paused = true)]
async fn clients_can_share_one_bucket() {
    let shared = Arc::new(RetryQuota::new(10, 5, 10, 1));
    let a = Client::builder(Policy::default())
        .seed(1)
        .quota(shared.clone())
        .build();
    let b = Client::builder(Policy::default())
        .seed(2)
        .quota(shared.clone())
        .build();
    let refused = || async { Err::<Success<()>, _>(Failure::Refused("refused".into())) };
    assert_eq!(
        a.run(|_| refused()).await.attempts(),
        3,
        "a spends both retries"
    );
    assert_eq!(
        b.run(|_| refused()).await.attempts(),
        1,
        "nothing is left for b"
    );
    assert_eq!(shared.tokens(), 0);
}
