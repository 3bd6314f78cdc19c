//! The integration tests of `retrykey-http`.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

mod axum_router;
mod body_timeout;
mod defaults;
mod fingerprint_rules;
mod hostile_input;
mod key_header;
mod known_bad_requests;
mod memory_store;
mod observed;
mod released_statuses;
mod store_write_failures;

// The Stage 4 check suite against the correct crate: every check must pass.
retrykey_http_checks::http_suite!(retrykey_http_checks::LayerUnderTest::correct());

// The simulator's suite against the correct layer: every seed keeps every rule.
retrykey_sim::sim_suite!(retrykey_sim::Stack::correct());
