//! Plain `cargo test` confirms, in-process, that each Stage 6 variant still fails exactly its
//! declared replica checks: a variant fixed by accident, or broken in a new way, turns this red.
//! Each check starts on fresh SQLite files and forces its interleavings with gates, crash hooks
//! and clocks set ahead, so the failing set is the same on every run.

use std::collections::BTreeSet;
use std::sync::Arc;

use retrykey_http::{BoxFuture, Error};
use retrykey_replicas::{FenceSteps, Opened, StoreChoice, StoreOptions};
use retrykey_replicas_checks::{ReplicasUnderTest, VariantClaim, VariantFence, failing_checks};

fn assert_fails_as_declared(variant: &str, subject: ReplicasUnderTest) {
    retrykey_tests::assert_fails_as_declared(
        variant,
        6,
        &["replicas::"],
        &failing_checks(&subject),
    );
}

/// Opens a replica through per-replica-memory's copy of `open.rs` (its own `StoreChoice`).
fn open_per_replica_memory(
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

// The correct replicas fail no check: the baseline every variant is compared with.
#[test]
fn correct_replicas_fail_nothing() {
    assert_eq!(
        failing_checks(&ReplicasUnderTest::correct()),
        BTreeSet::new()
    );
}

// Each variant fails exactly the checks it declares.
#[test]
fn per_replica_memory_fails_as_declared() {
    let subject = ReplicasUnderTest::correct().with_open(open_per_replica_memory);
    assert_fails_as_declared("per-replica-memory", subject);
}

#[test]
fn lease_without_fence_fails_as_declared() {
    let subject = ReplicasUnderTest::correct().with_steps(VariantFence {
        holds: lease_without_fence::holds,
        finish: lease_without_fence::finish,
        renew: lease_without_fence::renew,
    });
    assert_fails_as_declared("lease-without-fence", subject);
}

#[test]
fn no_lease_fails_as_declared() {
    let subject = ReplicasUnderTest::correct().with_steps(VariantClaim(no_lease::claim));
    assert_fails_as_declared("no-lease", subject);
}
