//! The integration tests of `retrykey-converter`.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

mod outbox_pg;
mod pg;
mod service;

// The Stage 7 outbox checks against the correct crates: every one must pass.
retrykey_outbox_checks::outbox_suite!(retrykey_outbox_checks::OutboxUnderTest::correct());
