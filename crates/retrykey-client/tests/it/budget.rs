//! The budget: a deadline that nested layers can shorten but not extend, and one retry pool.

use std::time::Duration;

use retrykey_client::nesting::child_budget;
use retrykey_client::{Budget, Client, Failure, Policy, Success};

// A budget too long to represent runs like a very long one instead of overflowing.
#[tokio::test(start_paused = true)]
async fn an_endless_budget_does_not_overflow() {
    let policy = Policy::builder().budget(Duration::MAX).build().unwrap();
    let budget = Budget::start(&policy);
    // About thirty years: far past any real operation, and still a representable instant.
    let year = Duration::from_secs(365 * 24 * 60 * 60);
    assert!(budget.remaining() > year * 29, "{:?}", budget.remaining());
    assert!(budget.remaining() <= year * 30, "{:?}", budget.remaining());
    let client = Client::builder(policy).seed(1).build();
    let outcome = client
        .run(|_| async {
            Ok::<_, Failure>(Success {
                value: 7,
                replayed: false,
            })
        })
        .await;
    assert_eq!(outcome.attempts(), 1);
}

// A child budget ends no later than its parent, and spends from the parent's retry pool.
#[tokio::test(start_paused = true)]
async fn a_child_budget_only_shrinks_and_shares_retries() {
    let parent_policy = Policy::builder()
        .budget(Duration::from_secs(2))
        .build()
        .unwrap();
    let parent = Budget::start(&parent_policy);
    let long = Policy::builder()
        .max_attempts(9)
        .budget(Duration::from_secs(60))
        .build()
        .unwrap();
    let short = Policy::builder()
        .budget(Duration::from_secs(1))
        .build()
        .unwrap();

    assert_eq!(child_budget(&parent, &long).deadline(), parent.deadline());
    assert!(child_budget(&parent, &short).deadline() < parent.deadline());

    let child = child_budget(&parent, &long);
    assert_eq!((parent.retries_left(), child.retries_left()), (2, 2));
    assert!(child.try_spend_retry());
    assert_eq!(
        parent.retries_left(),
        1,
        "the child spent from the parent's pool"
    );
    assert!(parent.try_spend_retry());
    assert!(!child.try_spend_retry(), "the pool is empty for both");
    assert_eq!((parent.retries_left(), child.retries_left()), (0, 0));
}

// A nested layer stops at its own attempt limit even when its caller's pool has retries left:
// the pool bounds the whole operation, the layer's policy bounds the layer.
#[tokio::test(start_paused = true)]
async fn a_nested_layer_stops_at_its_own_attempt_limit() {
    let outer = Policy::builder().max_attempts(5).build().unwrap();
    let parent = Budget::start(&outer);
    assert_eq!(parent.retries_left(), 4);
    let inner = Policy::builder()
        .max_attempts(2)
        .base(Duration::from_millis(1))
        .cap(Duration::from_millis(2))
        .build()
        .unwrap();
    let client = Client::builder(inner).seed(3).build();
    let key = client.new_key();
    let outcome = client
        .run_nested(&parent, key, |_| async {
            Err::<Success<()>, _>(Failure::Refused("connection refused".into()))
        })
        .await;
    assert_eq!(outcome.attempts(), 2, "{outcome:?}");
    // The layer's one retry came out of the caller's pool.
    assert_eq!(parent.retries_left(), 3);
}
