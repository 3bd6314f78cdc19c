//! Nested layers that each retry: how their calls multiply, and how one shared budget bounds them.
//!
//! Three services in a chain, each with a policy of three attempts, in front of a dependency
//! that is down: if every layer owns its retries, the dependency receives 3 × 3 × 3 = 27 calls.
//! If the layers share the outer operation's budget ([`Client::run_nested`]), or only the outer
//! layer retries, it receives at most the policy's 3.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use retrykey::Key;

use crate::{
    Attempt, Budget, Client, Error, Failure, Outcome, Policy, RetryQuota, RetrySteps,
    StandardSteps, StatusFailure, Success,
};

/// How the layers of the chain retry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layering {
    /// Every layer retries under a budget of its own: the calls multiply.
    OwnBudgetPerLayer,
    /// Every layer retries, but nested layers work within the outer operation's budget.
    SharedBudget,
    /// Only the outer layer retries; the inner layers make one attempt each.
    OuterLayerOwnsRetries,
}

impl Layering {
    /// All three, in the order the demo prints them.
    pub const ALL: [Self; 3] = [
        Self::OwnBudgetPerLayer,
        Self::SharedBudget,
        Self::OuterLayerOwnsRetries,
    ];

    /// A short description for the demo's table.
    pub fn describe(self) -> &'static str {
        match self {
            Self::OwnBudgetPerLayer => "each layer retries with its own budget",
            Self::SharedBudget => "nested layers share one budget",
            Self::OuterLayerOwnsRetries => "only the outer layer retries",
        }
    }
}

/// What one run of the chain produced.
#[derive(Debug)]
pub struct Amplification {
    /// Calls that reached the failing dependency.
    pub downstream_calls: u32,
    /// What the outer layer's caller was told.
    pub outcome: Outcome<()>,
}

/// The demo's policy: `attempts` per layer, with waits of a millisecond or two, since the demo
/// counts calls and has no reason to wait like a real client.
pub fn demo_policy(attempts: u32) -> Result<Policy, Error> {
    Policy::builder()
        .max_attempts(attempts)
        .base(Duration::from_millis(1))
        .cap(Duration::from_millis(2))
        .build()
}

/// Sends one operation through `layers` nested layers (each following `policy`, except as
/// `layering` says) to a dependency that always answers 503, and counts the calls it receives.
///
/// Each layer has its own client seeded from `seed` and an unlimited retry quota, so the
/// count depends on the policy and the layering alone.
pub async fn run_chain(
    layers: u32,
    policy: Policy,
    layering: Layering,
    seed: u64,
) -> Amplification {
    run_chain_with::<StandardSteps>(layers, policy, layering, seed).await
}

/// [`run_chain`] with the executor built from `P`: the seam the labs use (`labs/README.md`).
#[doc(hidden)]
pub async fn run_chain_with<P: RetrySteps>(
    layers: u32,
    policy: Policy,
    layering: Layering,
    seed: u64,
) -> Amplification {
    let clients: Vec<Client<P>> = (0..layers.max(1))
        .map(|depth| {
            let layer_policy = match layering {
                Layering::OuterLayerOwnsRetries if depth > 0 => policy.single_attempt(),
                _ => policy,
            };
            Client::builder(layer_policy)
                .steps::<P>()
                .seed(seed.wrapping_add(u64::from(depth)))
                .quota(Arc::new(RetryQuota::unlimited()))
                .build()
        })
        .collect();
    let calls = AtomicU32::new(0);
    let key = clients[0].new_key();
    let outcome = layer(&clients, layering, None, key, &calls).await;
    Amplification {
        downstream_calls: calls.load(Ordering::Acquire),
        outcome,
    }
}

type LayerFuture<'a> = Pin<Box<dyn Future<Output = Outcome<()>> + Send + 'a>>;

fn layer<'a, P: RetrySteps>(
    clients: &'a [Client<P>],
    layering: Layering,
    parent: Option<Budget>,
    key: Key,
    calls: &'a AtomicU32,
) -> LayerFuture<'a> {
    Box::pin(async move {
        let (client, inner) = clients.split_first().expect("at least one layer");
        let attempt = move |attempt: Attempt| async move {
            if inner.is_empty() {
                calls.fetch_add(1, Ordering::AcqRel);
                return Err(Failure::Status(StatusFailure::new(
                    503,
                    "dependency unavailable",
                )));
            }
            let parent = match layering {
                Layering::OwnBudgetPerLayer => None,
                _ => Some(attempt.budget),
            };
            as_reply(layer(inner, layering, parent, attempt.key, calls).await)
        };
        match parent {
            Some(parent) => client.run_nested(&parent, key, attempt).await,
            None => client.run_with_key(key, attempt).await,
        }
    })
}

/// What a layer tells its caller about the layer below: a definitive answer passes through;
/// a layer that gave up answers 503, as a service in front of a failing dependency would.
fn as_reply(outcome: Outcome<()>) -> Result<Success<()>, Failure> {
    match outcome {
        Outcome::Succeeded {
            value, replayed, ..
        } => Ok(Success { value, replayed }),
        Outcome::Rejected { failure, .. } => Err(Failure::Status(failure)),
        Outcome::Unknown { stop, .. } => Err(Failure::Status(StatusFailure::new(
            503,
            format!("gave up: {stop}"),
        ))),
    }
}
