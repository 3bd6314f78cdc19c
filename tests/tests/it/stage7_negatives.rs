//! Plain `cargo test` confirms, in-process, that each Stage 7 variant still fails exactly its
//! declared outbox checks: a variant fixed by accident, or broken in a new way, turns this red.
//! Each check starts on fresh SQLite files and forces its interleavings with gates, crash hooks
//! and clocks set ahead, so the failing set is the same on every run.

use std::collections::BTreeSet;

fn assert_outbox_fails_as_declared(variant: &str, subject: retrykey_outbox_checks::Subject) {
    retrykey_tests::assert_fails_as_declared(
        variant,
        7,
        &["outbox::"],
        &retrykey_outbox_checks::failing_checks(&subject),
    );
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
