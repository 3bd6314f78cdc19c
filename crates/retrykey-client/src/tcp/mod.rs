//! A loopback TCP ledger service in front of a Stage 1 ledger, its line protocol, and its client.
//!
//! The service exists to show the lost reply over a real connection: its fault switch lets
//! the ledger commit and then closes the connection before the reply is written.

mod client;
pub mod protocol;
mod server;

pub use client::TcpLedger;
pub use server::{Faults, LedgerServer};
