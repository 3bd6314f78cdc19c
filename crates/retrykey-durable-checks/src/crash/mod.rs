//! Crashes: the scenario each crash point is checked with, and the harnesses that run it.
//!
//! The points themselves live in the ledger's transactions ([`retrykey_durable::crash`]); this
//! module kills a ledger at them. [`scenario`] says what must hold after a crash and a retry,
//! [`harness`] runs a ledger as a real process (aborted by a failpoint) or in this process (a
//! panic at the point), and [`server`] is the process: a ledger behind a line protocol.

pub mod harness;
pub mod scenario;
pub mod server;

pub use retrykey_durable::crash::{Hooks, Point};
