//! The integration tests of `retrykey-outbox`.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

mod dispatcher;
mod faults;
mod pg;
mod programs;
mod store;
mod sweep;

// The Stage 7 outbox checks against the correct crates: every one must pass.
retrykey_outbox_checks::outbox_suite!(retrykey_outbox_checks::OutboxUnderTest::correct());
