//! Checks on classification: transient failures are retried, definitive answers are not.

use std::sync::Arc;
use std::time::Duration;

use retrykey::{Ledger, Request, Store};

use retrykey_client::adapters::MemoryAdapter;
use retrykey_client::{Client, Failure, Outcome, Policy, RetrySteps, StatusFailure, Stop};

use crate::{paused, timed};

/// Runs one operation whose attempts fail with `failure` until attempt `succeed_at` (if any),
/// and returns the outcome and the number of calls made.
async fn failing_until<P: RetrySteps>(
    policy: Policy,
    failure: Failure,
    succeed_at: Option<u32>,
) -> (Outcome<()>, u32) {
    let client = Client::builder(policy).steps::<P>().seed(3).build();
    let (outcome, starts) = timed(&client, failure, succeed_at).await;
    (outcome, starts.len() as u32)
}

fn policy() -> Policy {
    Policy::builder()
        .attempt_timeout(Duration::from_secs(1))
        .build()
        .unwrap()
}

/// Definitive answers (400, 401, 403, 404, 409 not in progress, 422) end the operation after
/// one attempt, as `Rejected`; a conflict from the ledger changes nothing.
pub fn definitive_answers_are_not_retried<P: RetrySteps>() {
    paused(async {
        for status in [400, 401, 403, 404, 409, 422] {
            let failure = StatusFailure::new(status, "definitive");
            let (outcome, calls) =
                failing_until::<P>(policy(), Failure::Status(failure.clone()), Some(2)).await;
            assert_eq!(
                calls, 1,
                "status {status} is definitive: it must not be retried"
            );
            assert_eq!(
                outcome,
                Outcome::Rejected {
                    failure,
                    attempts: 1
                }
            );
        }

        let store = Arc::new(Store::new());
        let ledger = MemoryAdapter::new(store.clone());
        let client = Client::builder(policy()).steps::<P>().seed(4).build();
        let key = client.new_key();
        store
            .apply(&key, &Request::new("convert-document", 7).unwrap())
            .unwrap();
        let changed = Request::new("convert-document", 8).unwrap();
        let outcome = client
            .run_with_key(key, |attempt| ledger.apply(attempt, &changed))
            .await;
        assert!(
            matches!(&outcome, Outcome::Rejected { failure, attempts: 1 } if failure.status == 409),
            "a conflict is definitive, got {outcome:?}"
        );
        assert_eq!(
            (store.total().unwrap(), store.records().unwrap()),
            (7, 1),
            "nothing changed"
        );
    });
}

/// Transport failures, 408, 429, 502, 503, 504 and a 409 "in progress" are retried.
pub fn transient_failures_are_retried<P: RetrySteps>() {
    paused(async {
        let in_progress = StatusFailure {
            in_progress: true,
            ..StatusFailure::new(409, "first request still running")
        };
        let transient = [
            Failure::Refused("connection refused".into()),
            Failure::TimedOut,
            Failure::Lost("reset by peer".into()),
            Failure::Status(StatusFailure::new(408, "request timeout")),
            Failure::Status(StatusFailure::new(429, "slow down")),
            Failure::Status(StatusFailure::new(502, "bad gateway")),
            Failure::Status(StatusFailure::new(503, "unavailable")),
            Failure::Status(StatusFailure::new(504, "gateway timeout")),
            Failure::Status(in_progress),
        ];
        for failure in transient {
            let (outcome, calls) = failing_until::<P>(policy(), failure.clone(), Some(2)).await;
            assert_eq!(calls, 2, "{failure} is transient: it must be retried");
            assert!(
                matches!(outcome, Outcome::Succeeded { attempts: 2, .. }),
                "{outcome:?}"
            );
        }
    });
}

/// A plain 500 stops the operation as unknown, unless the policy opts in to retrying it.
pub fn plain_500_is_retried_only_when_configured<P: RetrySteps>() {
    paused(async {
        let failure = Failure::Status(StatusFailure::new(500, "internal error"));
        let (outcome, calls) = failing_until::<P>(policy(), failure.clone(), Some(2)).await;
        assert_eq!(
            calls, 1,
            "a 500 may hide a partial effect: not retried by default"
        );
        assert!(
            matches!(
                outcome,
                Outcome::Unknown {
                    stop: Stop::NotRetryable,
                    attempts: 1,
                    ..
                }
            ),
            "{outcome:?}"
        );

        let opted_in = Policy::builder().retry_500(true).build().unwrap();
        let (outcome, calls) = failing_until::<P>(opted_in, failure, Some(2)).await;
        assert_eq!(calls, 2, "retried when the policy says so");
        assert!(
            matches!(outcome, Outcome::Succeeded { attempts: 2, .. }),
            "{outcome:?}"
        );
    });
}
