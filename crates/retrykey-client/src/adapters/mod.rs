//! Ready attempt functions for the in-memory ledger and for HTTP.

mod http;
mod key_header;
mod memory;

pub use http::{HttpAdapter, HttpResponse, KEY_HEADER, REPLAYED_HEADER};
pub use key_header::KeyHeader;
pub use memory::{MemoryAdapter, answer_for};
