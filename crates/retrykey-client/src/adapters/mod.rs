//! Ready attempt functions for the in-memory ledger and for HTTP, and the encoder that writes a
//! key in the HTTP header's grammar.
//!
//! `HttpAdapter` and `HttpRequest` send through reqwest, behind the `http` feature; what an
//! answer means ([`HttpResponse::judge`]) and the header names need no HTTP client.

#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
mod http_request;
mod http_response;
mod key_header;
mod memory;

#[cfg(feature = "http")]
pub use http::HttpAdapter;
#[cfg(feature = "http")]
pub use http_request::{HttpRequest, Method};
pub use http_response::{HttpResponse, KEY_HEADER, REPLAYED_HEADER};
pub use key_header::KeyHeader;
pub use memory::{MemoryAdapter, failure_for};
#[cfg(feature = "http")]
pub use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
