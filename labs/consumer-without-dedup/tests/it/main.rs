//! The variant `consumer-without-dedup` under the shared checks: the ones its Cargo.toml declares must fail.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

// The Stage 7 outbox checks with this variant's conversion in the consumer: the checks
// declared in Cargo.toml must fail.
retrykey_outbox_checks::outbox_suite!(retrykey_outbox_checks::Subject::correct().with_consumer(
    retrykey_converter::ConvertSteps {
        convert: consumer_without_dedup::convert,
    }
));
