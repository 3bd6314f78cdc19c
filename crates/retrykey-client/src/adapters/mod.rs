//! Ready attempt functions for the in-memory ledger and for HTTP, and the encoder that writes a
//! key in the HTTP header's grammar.

mod http;
mod key_header;
mod memory;

pub use http::{HttpAdapter, HttpResponse, KEY_HEADER, REPLAYED_HEADER};
pub use key_header::KeyHeader;
pub use memory::{MemoryAdapter, failure_for};
