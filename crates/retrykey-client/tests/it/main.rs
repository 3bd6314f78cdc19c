//! The integration tests of `retrykey-client`.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

mod amplification;
mod budget;
mod common;
mod http_adapter;
mod http_headers;
mod http_methods;
mod http_timeout;
mod key_grammar;
mod policy_construction;
mod quota;
mod retry_after;
mod tcp_budget_exhausted;
mod tcp_connection_refused;
mod tcp_lost_reply;
mod tcp_protocol;
mod tcp_retry_after;
mod tcp_server_restart;
mod tracing_events;
mod transport_errors;

use retrykey_client::StandardSteps;

// The shared retry checks, run against the correct client.
retrykey_client_checks::retry_suite!(StandardSteps);

// The simulator's suite against the correct client: every seed keeps every rule.
retrykey_sim::sim_suite!(retrykey_sim::Stack::correct());
