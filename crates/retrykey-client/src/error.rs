//! The one error type of the client crate: a policy that cannot work, a key or a request a
//! transport cannot carry, or a service that cannot start.

use std::time::Duration;

/// Why a policy could not be built, a key or a request could not be sent, or a loopback service
/// could not start.
///
/// A policy is checked once, when it is built, so a retry loop never runs with settings that
/// make no sense (no attempts, no time, a cap that cuts below the first delay).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `max_attempts` was zero: an operation needs at least its first attempt.
    #[error("a policy needs at least one attempt, got 0")]
    ZeroAttempts,
    /// The overall budget was zero: no attempt could ever run.
    #[error("the overall budget must be positive, got 0 ms")]
    ZeroBudget,
    /// A duration given in milliseconds (from configuration) was negative.
    #[error("{setting} must not be negative, got {millis} ms")]
    NegativeDuration {
        /// Which setting: `base`, `cap`, `budget` or `attempt_timeout`.
        setting: &'static str,
        /// The value that was given.
        millis: i64,
    },
    /// The cap was below the base delay, so the schedule could never grow as configured.
    #[error("the cap ({cap:?}) is below the base delay ({base:?})")]
    CapBelowBase {
        /// The base delay.
        base: Duration,
        /// The cap that was given.
        cap: Duration,
    },
    /// A per-attempt timeout of zero would fail every attempt before it starts.
    #[error("the per-attempt timeout must be positive, got 0 ms")]
    ZeroAttemptTimeout,
    /// The key holds a character the `Idempotency-Key` header cannot carry (a structured-field
    /// string is printable ASCII only), so the operation was refused before any request left.
    #[error(
        "character {at} of the key is not printable ASCII, which the Idempotency-Key header cannot carry"
    )]
    KeyNotSendable {
        /// The offending character's position in the key, counted in characters from 0.
        at: usize,
    },
    /// The HTTP request described by the caller cannot be sent: a header name or value HTTP
    /// cannot carry, a header the adapter sets itself (`Idempotency-Key`), or a URL that does not
    /// parse. Refused before the first attempt, like a key that cannot be sent.
    #[error("the HTTP request cannot be sent: {reason}")]
    InvalidRequest {
        /// What is wrong with it.
        reason: String,
    },
    /// The loopback ledger service could not bind or serve.
    #[error("ledger service I/O: {0}")]
    Io(#[from] std::io::Error),
}
