//! Checks on nested layers: they share the caller's budget instead of starting fresh ones.

use std::sync::Mutex;
use std::time::Duration;

use retrykey_client::amplification::{Layering, run_chain_with};
use retrykey_client::{Client, Failure, Outcome, Policy, RetrySteps, Success};

use crate::paused;

fn three_attempts() -> Policy {
    Policy::builder()
        .max_attempts(3)
        .base(Duration::from_millis(1))
        .cap(Duration::from_millis(4))
        .build()
        .unwrap()
}

/// Three nested layers that each allow 3 attempts make at most 3 downstream calls when they
/// share one budget, or when only the outer layer retries.
pub fn nested_layers_share_one_budget<P: RetrySteps>() {
    paused(async {
        for layering in [Layering::SharedBudget, Layering::OuterLayerOwnsRetries] {
            let run = run_chain_with::<P>(3, three_attempts(), layering, 10).await;
            assert_eq!(
                run.downstream_calls,
                3,
                "{}: the policy allows 3 attempts in all, the dependency got {}",
                layering.describe(),
                run.downstream_calls
            );
            assert_eq!(run.outcome.kind(), "unknown");
        }
    });
}

/// A nested layer with a longer budget of its own still ends at its caller's deadline.
pub fn nested_layer_cannot_outlive_its_caller<P: RetrySteps>() {
    paused(async {
        let outer_policy = Policy::builder()
            .budget(Duration::from_secs(1))
            .build()
            .unwrap();
        let inner_policy = Policy::builder()
            .budget(Duration::from_secs(10))
            .build()
            .unwrap();
        let outer = Client::builder(outer_policy).steps::<P>().seed(11).build();
        let inner = Client::builder(inner_policy).steps::<P>().seed(12).build();
        let seen = Mutex::new(None);
        let outcome = outer
            .run(|attempt| {
                let (inner, seen) = (&inner, &seen);
                async move {
                    tokio::time::sleep(Duration::from_millis(600)).await;
                    let nested = inner
                        .run_nested(&attempt.budget, attempt.key.clone(), |nested| async move {
                            *seen.lock().unwrap() = Some(nested.remaining());
                            Ok::<_, Failure>(Success {
                                value: (),
                                replayed: false,
                            })
                        })
                        .await;
                    assert_eq!(nested.kind(), "succeeded");
                    Ok::<_, Failure>(Success {
                        value: (),
                        replayed: false,
                    })
                }
            })
            .await;
        assert!(matches!(outcome, Outcome::Succeeded { .. }), "{outcome:?}");
        let left = seen.lock().unwrap().expect("the nested attempt ran");
        assert!(
            left <= Duration::from_millis(400),
            "the caller had 400 ms left; the nested layer gave itself {left:?}"
        );
    });
}
