//! The variant `per-replica-memory` under the shared checks: the ones its Cargo.toml declares must fail.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

use std::sync::Arc;

use retrykey_http::{BoxFuture, Error};
use retrykey_replicas::{FenceSteps, Opened, StoreChoice, StoreOptions};

// The Stage 6 replica checks with every replica opened by this variant: the checks declared in
// Cargo.toml must fail.
/// Opens a replica through this variant's copy of `open.rs` (its own `StoreChoice`).
fn open(
    choice: &StoreChoice,
    options: StoreOptions,
    steps: Arc<dyn FenceSteps>,
) -> BoxFuture<Result<Opened, Error>> {
    let StoreChoice::Sqlite(path) = choice else {
        panic!("the replica checks open SQLite replicas only, not {choice:?}");
    };
    let choice = per_replica_memory::StoreChoice::Sqlite(path.clone());
    Box::pin(async move {
        let opened = choice.open_with_steps(options, steps).await?;
        Ok(Opened {
            store: opened.store,
            ledger: opened.ledger,
        })
    })
}

retrykey_replicas_checks::replicas_suite!(
    retrykey_replicas_checks::ReplicasUnderTest::correct().with_open(super::open)
);
