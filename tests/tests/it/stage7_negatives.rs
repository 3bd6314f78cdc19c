//! Plain `cargo test` confirms, in-process, that each Stage 7 variant still fails exactly its
//! declared outbox checks: a variant fixed by accident, or broken in a new way, turns this red.
//! Each check starts on fresh SQLite files and forces its interleavings with gates, crash hooks
//! and clocks set ahead, so the failing set is the same on every run.

use std::collections::BTreeSet;

fn assert_outbox_fails_as_declared(
    variant: &str,
    subject: retrykey_outbox_checks::OutboxUnderTest,
) {
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
    let subject = retrykey_outbox_checks::OutboxUnderTest::correct();
    assert_eq!(
        retrykey_outbox_checks::failing_checks(&subject),
        BTreeSet::new()
    );
}

/// The correct document service around publish-outside-transaction's accept.
struct PublishOutsideTransaction;

impl retrykey_outbox::sqlite::AcceptSteps for PublishOutsideTransaction {
    fn accept(
        &self,
        outbox: &retrykey_outbox::SqliteOutbox,
        key: &retrykey::Key,
        job: &retrykey::Request,
    ) -> Result<retrykey_outbox::Accepted, retrykey_outbox::Error> {
        publish_outside_transaction::accept(outbox, key, job)
    }
}

#[test]
fn publish_outside_transaction_fails_as_declared() {
    let subject = retrykey_outbox_checks::OutboxUnderTest::correct()
        .with_documents(&PublishOutsideTransaction);
    assert_outbox_fails_as_declared("publish-outside-transaction", subject);
}

/// The correct consumer around consumer-without-dedup's conversion.
struct ConsumerWithoutDedup;

impl retrykey_converter::ConvertSteps for ConsumerWithoutDedup {
    fn convert(
        &self,
        tx: &rusqlite::Transaction<'_>,
        request: &retrykey_wire::ConversionRequest,
        now_ms: i64,
    ) -> rusqlite::Result<retrykey_converter::Converted> {
        consumer_without_dedup::convert(tx, request, now_ms)
    }
}

#[test]
fn consumer_without_dedup_fails_as_declared() {
    let subject =
        retrykey_outbox_checks::OutboxUnderTest::correct().with_consumer(&ConsumerWithoutDedup);
    assert_outbox_fails_as_declared("consumer-without-dedup", subject);
}

/// The correct dispatcher around mark-before-send's delivery.
struct MarkBeforeSend;

impl retrykey_outbox::dispatcher::DeliverySteps for MarkBeforeSend {
    fn deliver<'a>(
        &self,
        courier: &'a retrykey_outbox::courier::Courier,
        claimed: &'a retrykey_outbox::Claimed,
    ) -> retrykey_outbox::courier::Delivering<'a> {
        mark_before_send::deliver(courier, claimed)
    }
}

#[test]
fn mark_before_send_fails_as_declared() {
    let subject =
        retrykey_outbox_checks::OutboxUnderTest::correct().with_dispatcher(&MarkBeforeSend);
    assert_outbox_fails_as_declared("mark-before-send", subject);
}
