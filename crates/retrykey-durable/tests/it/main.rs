//! The integration tests of `retrykey-durable`.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

mod common;
mod connections;
mod contract_pg;
mod contract_sqlite;
mod crash_pg;
mod crash_sqlite;
mod pipelined_begin;
mod retention;
mod schema_versions;
mod schema_versions_pg;
mod solutions;
