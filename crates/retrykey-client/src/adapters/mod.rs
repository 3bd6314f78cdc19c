//! Ready attempt functions for the in-memory ledger and for HTTP.

mod http;
mod memory;

pub use http::{HttpLedger, HttpResponse, KEY_HEADER, REPLAYED_HEADER};
pub use memory::{MemoryLedger, answer_for};
