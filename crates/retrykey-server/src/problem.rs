//! The names every `application/problem+json` answer of the lab shares, whichever crate writes
//! it: the server's own refusals, the middleware's problems and the consumer's read alike to a
//! client.

/// The media type of every problem answer (RFC 9457).
pub const PROBLEM_JSON: &str = "application/problem+json";

/// Where problem `type` URIs live. They identify, they are not meant to be fetched.
pub const TYPE_BASE: &str = "https://retrykey.example/problems/";
