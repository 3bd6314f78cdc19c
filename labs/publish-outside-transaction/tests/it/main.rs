//! The variant `publish-outside-transaction` under the shared checks: the ones its Cargo.toml declares must fail.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

use retrykey::{Key, Request};
use retrykey_outbox::sqlite::{AcceptSteps, SqliteOutbox};
use retrykey_outbox::{Accepted, Error};

/// The correct document service around this variant's accept.
struct Variant;

impl AcceptSteps for Variant {
    fn accept(&self, outbox: &SqliteOutbox, key: &Key, job: &Request) -> Result<Accepted, Error> {
        publish_outside_transaction::accept(outbox, key, job)
    }
}

// The Stage 7 outbox checks with this variant's accept in the document service: the checks
// declared in Cargo.toml must fail.
retrykey_outbox_checks::outbox_suite!(
    retrykey_outbox_checks::OutboxUnderTest::correct().with_documents(&Variant)
);
