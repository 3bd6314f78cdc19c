//! The variant `consumer-without-dedup` under the shared checks: the ones its Cargo.toml declares must fail.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

use retrykey_converter::{ConvertSteps, Converted};
use retrykey_wire::ConversionRequest;
use rusqlite::Transaction;

/// The correct consumer around this variant's conversion.
struct Variant;

impl ConvertSteps for Variant {
    fn convert(
        &self,
        tx: &Transaction<'_>,
        request: &ConversionRequest,
        now_ms: i64,
    ) -> rusqlite::Result<Converted> {
        consumer_without_dedup::convert(tx, request, now_ms)
    }
}

// The Stage 7 outbox checks with this variant's conversion in the consumer: the checks
// declared in Cargo.toml must fail.
retrykey_outbox_checks::outbox_suite!(
    retrykey_outbox_checks::OutboxUnderTest::correct().with_consumer(&Variant)
);
