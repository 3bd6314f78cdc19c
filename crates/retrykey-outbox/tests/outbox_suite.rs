//! The Stage 5 outbox checks against the correct crates: every one must pass.

retrykey_outbox_checks::outbox_suite!(retrykey_outbox_checks::Subject::correct());
