//! The variant `publish-outside-transaction` under the shared checks: the ones its Cargo.toml declares must fail.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

// The Stage 7 outbox checks with this variant's accept in the document service: the checks
// declared in Cargo.toml must fail.
retrykey_outbox_checks::outbox_suite!(retrykey_outbox_checks::Subject::correct().with_documents(
    retrykey_outbox::sqlite::AcceptSteps {
        accept: publish_outside_transaction::accept,
    }
));
