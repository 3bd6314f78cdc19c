//! The Stage 3 check suite against the correct crate: every check must pass.

retrykey_http_checks::http_suite!(retrykey_http_checks::Subject::correct());
