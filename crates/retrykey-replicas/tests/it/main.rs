//! The integration tests of `retrykey-replicas`.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

mod bound_pg;
mod crash_matrix;
mod fail_closed;
mod flood_bound;
mod graceful_shutdown;
mod http_suite_pg;
mod http_suite_sqlite;
mod lease_renewal;
mod payments_flags;
mod payments_server;
mod payments_sqlite;
mod phase;
mod processes;
mod slow_clients;
mod spray;
mod support;
mod takeover;

// The Stage 6 replica checks against the correct crate: every check must pass.
retrykey_replicas_checks::replicas_suite!(retrykey_replicas_checks::ReplicasUnderTest::correct());
