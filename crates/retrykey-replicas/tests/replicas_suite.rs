//! The Stage 5 replica checks against the correct crate: every check must pass.

retrykey_replicas_checks::replicas_suite!(retrykey_replicas_checks::Subject::correct());
