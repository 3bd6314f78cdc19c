//! A loopback TCP ledger service in front of a Stage 1 ledger, its line protocol, and the adapter
//! that sends a retry client's attempts to it.
//!
//! The service exists to show the lost reply over a real connection: its fault switch lets
//! the ledger commit and then closes the connection before the reply is written.

mod adapter;
pub mod protocol;
mod server;

pub use adapter::TcpAdapter;
pub use server::{Faults, LedgerServer};
