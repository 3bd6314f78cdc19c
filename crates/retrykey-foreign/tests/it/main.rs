//! The integration tests of `retrykey-foreign`: one program, one module per behaviour, and the
//! shared suite by its own name.

mod key;
mod pg;
mod provider;
mod simulated;

// The Stage 9 checks against the correct crate: every one must pass.
retrykey_foreign_checks::foreign_suite!(retrykey_foreign_checks::ForeignUnderTest::correct());
