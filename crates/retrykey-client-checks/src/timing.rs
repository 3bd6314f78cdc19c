//! Checks on time: attempts, backoff ceilings, jitter spread, Retry-After, budget, cancellation.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use retrykey_client::backoff::ceiling;
use retrykey_client::{Client, Failure, Outcome, Policy, RetrySteps, StatusFailure, Stop, Success};
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::{paused, timed};

fn unavailable() -> Failure {
    Failure::Status(StatusFailure::new(503, "unavailable"))
}

fn busy_for(seconds: u64) -> Failure {
    Failure::Status(StatusFailure::new(503, "busy").retry_after(Duration::from_secs(seconds)))
}

/// An operation makes at most the policy's attempts, then reports unknown with the count.
pub fn attempts_stop_at_the_policy_maximum<P: RetrySteps>() {
    paused(async {
        let policy = Policy::builder().max_attempts(4).build().unwrap();
        let client = Client::builder(policy).steps::<P>().seed(5).build();
        let (outcome, starts) = timed(&client, unavailable(), None).await;
        assert_eq!(starts.len(), 4, "exactly the policy's 4 attempts");
        assert_eq!(
            outcome,
            Outcome::Unknown {
                last: unavailable(),
                attempts: 4,
                stop: Stop::AttemptsExhausted,
                may_have_applied: true,
            }
        );

        let refused = Failure::Refused("connection refused".into());
        let (outcome, _) = timed(&client, refused, None).await;
        assert!(
            matches!(
                outcome,
                Outcome::Unknown {
                    may_have_applied: false,
                    attempts: 4,
                    ..
                }
            ),
            "no attempt was sent, so none can have applied: {outcome:?}"
        );
    });
}

/// The wait before retry n stays within `0 ..= min(cap, base * 2^(n-1))`.
pub fn waits_stay_below_the_backoff_ceiling<P: RetrySteps>() {
    paused(async {
        let policy = Policy::builder()
            .max_attempts(6)
            .base(Duration::from_millis(100))
            .cap(Duration::from_millis(400))
            .build()
            .unwrap();
        for seed in 0..20 {
            let client = Client::builder(policy).steps::<P>().seed(seed).build();
            let (_, starts) = timed(&client, unavailable(), None).await;
            assert_eq!(starts.len(), 6);
            for (retry, pair) in (1..).zip(starts.windows(2)) {
                let wait = pair[1] - pair[0];
                let ceiling = ceiling(&policy, retry);
                assert!(
                    wait <= ceiling,
                    "retry {retry} waited {wait:?}, above its ceiling {ceiling:?}"
                );
            }
        }
    });
}

/// 100 clients that fail at the same instant retry at different instants: no millisecond holds
/// more than 10 of their first retries, and they spread over at least 40 distinct milliseconds
/// (tokio's timers have millisecond resolution; uniform draws over 100 ms fill about 63).
pub fn retries_of_synchronised_clients_spread_out<P: RetrySteps>() {
    paused(async {
        let start = Instant::now();
        let mut clients = JoinSet::new();
        for seed in 0..100 {
            clients.spawn(async move {
                let client = Client::builder(Policy::default())
                    .steps::<P>()
                    .seed(seed)
                    .build();
                let (_, starts) = timed(&client, unavailable(), Some(2)).await;
                starts[1] - start
            });
        }
        let retries: Vec<Duration> = clients.join_all().await;
        let mut per_millisecond = BTreeMap::<u128, u32>::new();
        for retry in &retries {
            *per_millisecond.entry(retry.as_millis()).or_default() += 1;
        }
        let crowd = per_millisecond.values().copied().max().unwrap_or(0);
        let distinct = per_millisecond.len();
        assert!(
            crowd <= 10,
            "{crowd} of 100 clients retried within the same millisecond: they retry in lockstep"
        );
        assert!(
            distinct >= 40,
            "100 clients retried in only {distinct} distinct milliseconds"
        );
    });
}

/// A `Retry-After` replaces the backoff: the next attempt starts no sooner than it says.
pub fn retry_after_is_honoured<P: RetrySteps>() {
    paused(async {
        let client = Client::builder(Policy::default())
            .steps::<P>()
            .seed(6)
            .build();
        let (outcome, starts) = timed(&client, busy_for(3), Some(2)).await;
        assert!(
            matches!(outcome, Outcome::Succeeded { attempts: 2, .. }),
            "{outcome:?}"
        );
        let waited = starts[1] - starts[0];
        assert!(
            waited >= Duration::from_secs(3),
            "asked for 3 s, retried after {waited:?}"
        );
    });
}

/// A `Retry-After` that does not fit in the budget stops the operation at once, as unknown.
pub fn retry_after_past_the_budget_stops_early<P: RetrySteps>() {
    paused(async {
        let client = Client::builder(Policy::default())
            .steps::<P>()
            .seed(7)
            .build();
        let start = Instant::now();
        let (outcome, starts) = timed(&client, busy_for(60), Some(2)).await;
        assert_eq!(
            starts.len(),
            1,
            "no retry fits in a 10 s budget after a 60 s wait"
        );
        assert_eq!(
            start.elapsed(),
            Duration::ZERO,
            "it stops now instead of waiting for nothing"
        );
        assert_eq!(
            outcome,
            Outcome::Unknown {
                last: busy_for(60),
                attempts: 1,
                stop: Stop::RetryAfterPastBudget,
                may_have_applied: true,
            }
        );
    });
}

/// Attempts that hang are cut at the attempt timeout, and the operation ends within its budget.
pub fn budget_bounds_the_whole_operation<P: RetrySteps>() {
    paused(async {
        let policy = Policy::builder()
            .max_attempts(10)
            .budget(Duration::from_millis(2_500))
            .attempt_timeout(Duration::from_secs(1))
            .build()
            .unwrap();
        let client = Client::builder(policy).steps::<P>().seed(8).build();
        let start = Instant::now();
        let (outcome, starts) = timed(&client, Failure::TimedOut, None).await;
        assert!(
            start.elapsed() <= policy.budget(),
            "took {:?}",
            start.elapsed()
        );
        let Outcome::Unknown {
            last,
            attempts,
            stop,
            may_have_applied,
        } = outcome
        else {
            panic!("expected unknown, got {outcome:?}");
        };
        assert_eq!(
            (last, stop, may_have_applied),
            (Failure::TimedOut, Stop::BudgetExhausted, true)
        );
        assert_eq!(attempts as usize, starts.len());
        assert!(
            (3..10).contains(&attempts),
            "three attempts fit in 2.5 s, got {attempts}"
        );
    });
}

/// Dropping the operation's future stops it: no attempt after the drop, nothing left holding
/// the attempt function.
pub fn dropping_the_operation_cancels_it<P: RetrySteps>() {
    paused(async {
        let client = Client::builder(Policy::default())
            .steps::<P>()
            .seed(9)
            .build();
        let calls = Arc::new(AtomicU32::new(0));
        let attempt_calls = Arc::clone(&calls);
        let operation = client.run(move |_| {
            attempt_calls.fetch_add(1, Ordering::AcqRel);
            async { Err::<Success<()>, _>(busy_for(5)) }
        });
        let cut = tokio::time::timeout(Duration::from_secs(1), operation).await;
        assert!(
            cut.is_err(),
            "the operation is still waiting when the caller gives up"
        );
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert_eq!(
            calls.load(Ordering::Acquire),
            1,
            "no attempt may run after the drop"
        );
        assert_eq!(
            Arc::strong_count(&calls),
            1,
            "nothing may still hold the attempt function"
        );
    });
}
