//! Nested retries multiply the calls to a failing dependency unless the layers share one budget.

use retrykey_client::amplification::{Layering, demo_policy, run_chain};

async fn calls(layers: u32, attempts: u32, layering: Layering) -> u32 {
    run_chain(layers, demo_policy(attempts).unwrap(), layering, 7)
        .await
        .downstream_calls
}

// Three layers of three attempts, each with its own budget, call the dependency 27 times.
#[tokio::test(start_paused = true)]
async fn own_budgets_multiply() {
    assert_eq!(calls(3, 3, Layering::OwnBudgetPerLayer).await, 27);
    assert_eq!(calls(4, 3, Layering::OwnBudgetPerLayer).await, 81);
    assert_eq!(calls(2, 4, Layering::OwnBudgetPerLayer).await, 16);
}

// Sharing one budget, or one owning layer, keeps the calls at the policy's maximum.
#[tokio::test(start_paused = true)]
async fn one_budget_or_one_owner_stays_within_the_policy() {
    for layering in [Layering::SharedBudget, Layering::OuterLayerOwnsRetries] {
        for (layers, attempts) in [(3, 3), (4, 3), (2, 4), (1, 3)] {
            assert_eq!(
                calls(layers, attempts, layering).await,
                attempts,
                "{layering:?} {layers}x{attempts}"
            );
        }
    }
}
