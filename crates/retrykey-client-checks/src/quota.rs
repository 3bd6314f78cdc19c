//! Checks on the client-wide retry quota: an outage cannot turn every call into three.

use std::sync::atomic::{AtomicU32, Ordering};

use retrykey_client::{
    Client, DEFAULT_QUOTA_CAPACITY, DEFAULT_RETRY_COST, Failure, Outcome, Policy, RetrySteps, Stop,
    Success,
};

use crate::paused;

/// 1,000 operations against a dead service make at most capacity / retry cost (100) retries.
pub fn quota_bounds_retries_during_an_outage<P: RetrySteps>() {
    paused(async {
        let client = Client::builder(Policy::default())
            .steps::<P>()
            .seed(13)
            .build();
        let calls = AtomicU32::new(0);
        let mut shed = 0;
        for _ in 0..1_000 {
            let outcome = client
                .run(|_| {
                    calls.fetch_add(1, Ordering::AcqRel);
                    async { Err::<Success<()>, _>(Failure::Refused("connection refused".into())) }
                })
                .await;
            if matches!(
                outcome,
                Outcome::Unknown {
                    stop: Stop::QuotaExhausted,
                    ..
                }
            ) {
                shed += 1;
            }
        }
        let retries = calls.load(Ordering::Acquire) - 1_000;
        let allowed = DEFAULT_QUOTA_CAPACITY / DEFAULT_RETRY_COST;
        assert!(
            retries <= allowed,
            "{retries} retries during the outage; the quota allows {allowed}"
        );
        assert_eq!(retries, allowed, "the quota is spent before retries stop");
        assert!(
            shed >= 950,
            "once the quota is empty, operations stop after one attempt ({shed})"
        );
        assert_eq!(client.quota().tokens(), 0);

        let recovered = client
            .run(|_| async {
                Ok::<_, Failure>(Success {
                    value: (),
                    replayed: false,
                })
            })
            .await;
        assert_eq!(recovered.attempts(), 1);
        assert_eq!(
            client.quota().tokens(),
            1,
            "a first-try success refunds one token"
        );
    });
}
