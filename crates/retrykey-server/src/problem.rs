//! The names every `application/problem+json` answer of the lab shares, whichever crate writes
//! it: the server's own refusals, the middleware's problems and the consumer's read alike to a
//! client.

/// The media type of every problem answer (RFC 9457).
pub const PROBLEM_JSON: &str = "application/problem+json";

/// What a problem `type` URI starts with unless a service says otherwise: a URN, which names the
/// problem and promises no page to fetch. A service with pages for its problems sets its own
/// base (`IdempotencyLayer::builder().problem_base(...)`).
pub const TYPE_BASE: &str = "urn:retrykey:problem:";
