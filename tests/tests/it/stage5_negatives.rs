//! Plain `cargo test` confirms, in-process, that each Stage 5 variant still fails exactly its
//! declared checks (replica checks, outbox checks): a variant fixed by accident, or broken in a
//! new way, turns this red. Each check starts on fresh SQLite files and forces its
//! interleavings with gates, crash hooks and clocks set ahead, so the failing set is the same on
//! every run.

use std::collections::BTreeSet;

use std::sync::Arc;

use retrykey_http::{BoxFuture, Error};
use retrykey_replicas::{FenceSteps, Opened, StoreChoice, StoreOptions};
use retrykey_replicas_checks::{ReplicasUnderTest, VariantClaim, VariantFence, failing_checks};

fn assert_fails_as_declared(variant: &str, subject: ReplicasUnderTest) {
    retrykey_tests::assert_fails_as_declared(
        variant,
        5,
        &["replicas::"],
        &failing_checks(&subject),
    );
}

fn assert_outbox_fails_as_declared(variant: &str, subject: retrykey_outbox_checks::Subject) {
    retrykey_tests::assert_fails_as_declared(
        variant,
        5,
        &["outbox::"],
        &retrykey_outbox_checks::failing_checks(&subject),
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

// The correct outbox, consumer and dispatcher fail no outbox check.
#[test]
fn correct_outbox_fails_nothing() {
    let subject = retrykey_outbox_checks::Subject::correct();
    assert_eq!(
        retrykey_outbox_checks::failing_checks(&subject),
        BTreeSet::new()
    );
}

#[test]
fn publish_outside_transaction_fails_as_declared() {
    let subject = retrykey_outbox_checks::Subject::correct().with_documents(
        retrykey_outbox::sqlite::AcceptSteps {
            accept: publish_outside_transaction::accept,
        },
    );
    assert_outbox_fails_as_declared("publish-outside-transaction", subject);
}

#[test]
fn consumer_without_dedup_fails_as_declared() {
    let subject = retrykey_outbox_checks::Subject::correct().with_consumer(
        retrykey_converter::ConvertSteps {
            convert: consumer_without_dedup::convert,
        },
    );
    assert_outbox_fails_as_declared("consumer-without-dedup", subject);
}

#[test]
fn mark_before_send_fails_as_declared() {
    let subject = retrykey_outbox_checks::Subject::correct().with_dispatcher(
        retrykey_outbox::dispatcher::DeliverySteps {
            deliver: mark_before_send::deliver,
        },
    );
    assert_outbox_fails_as_declared("mark-before-send", subject);
}
