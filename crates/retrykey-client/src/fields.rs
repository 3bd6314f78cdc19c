//! The names of the fields in the client's `tracing` events, written down once, and the key's
//! digest that stands for the key in them.
//!
//! The executor emits one event when an attempt starts, one when it ends, and one per decision,
//! with target `retrykey_client::executor`:
//!
//! | event | level | fields |
//! |---|---|---|
//! | an attempt starts | DEBUG | [`KEY_DIGEST`], [`ATTEMPT`], [`TIMEOUT_MS`] |
//! | an attempt ends | DEBUG | [`KEY_DIGEST`], [`ATTEMPT`], [`OUTCOME`], and [`STATUS`] for an answer |
//! | retry after a wait | INFO | [`KEY_DIGEST`], [`ATTEMPT`], [`DECISION`] = `retry`, [`DELAY_MS`] |
//! | stop: succeeded | INFO | [`KEY_DIGEST`], [`ATTEMPTS`], [`DECISION`] = `succeeded`, [`REPLAYED`] |
//! | stop: definitive rejection | WARN | [`KEY_DIGEST`], [`ATTEMPTS`], [`DECISION`] = `rejected`, [`STATUS`] |
//! | stop: outcome unknown | WARN | [`KEY_DIGEST`], [`ATTEMPTS`], [`DECISION`] = `unknown`, [`STOP`], [`MAY_HAVE_APPLIED`] |
//!
//! | field | type | meaning |
//! |---|---|---|
//! | [`KEY_DIGEST`] | text | [`KeyDigest`] of the operation key: 16 hex characters, never the key |
//! | [`ATTEMPT`] | integer | the attempt's number, from 1 |
//! | [`ATTEMPTS`] | integer | attempts made when the operation stopped |
//! | [`TIMEOUT_MS`] | integer | the most the attempt may take: the policy's attempt timeout or the budget left |
//! | [`OUTCOME`] | text | how the attempt ended: `succeeded`, `replayed`, `refused`, `timed_out`, `lost` or `status` |
//! | [`STATUS`] | integer | the service's status, for an answer that is not a success |
//! | [`DECISION`] | text | `retry`, `succeeded`, `rejected` or `unknown` |
//! | [`DELAY_MS`] | integer | the wait before the next attempt (`Retry-After` or the backoff) |
//! | [`STOP`] | text | why an unknown outcome stopped: `attempts_exhausted`, `budget_exhausted`, `retry_after_past_budget`, `quota_exhausted` or `not_retryable` |
//! | [`REPLAYED`] | bool | the success was delivered from the service's record |
//! | [`MAY_HAVE_APPLIED`] | bool | some attempt may have reached the service |
//!
//! No level is ERROR: every one of these outcomes is one the caller is built to handle. No event
//! carries the key's text, a request body or a service's explanation (which may echo the key).

use std::fmt;

use sha2::{Digest, Sha256};

use crate::Key;

/// The operation key's digest: [`KeyDigest`].
pub const KEY_DIGEST: &str = "key_digest";
/// The attempt's number, from 1.
pub const ATTEMPT: &str = "attempt";
/// Attempts made when the operation stopped.
pub const ATTEMPTS: &str = "attempts";
/// The most time the attempt may take, in milliseconds.
pub const TIMEOUT_MS: &str = "timeout_ms";
/// How the attempt ended.
pub const OUTCOME: &str = "outcome";
/// The service's status, for an answer that is not a success.
pub const STATUS: &str = "status";
/// What the executor decided after an attempt.
pub const DECISION: &str = "decision";
/// The wait before the next attempt, in milliseconds.
pub const DELAY_MS: &str = "delay_ms";
/// Why an operation with an unknown outcome stopped.
pub const STOP: &str = "stop";
/// Whether a success was delivered from the service's record.
pub const REPLAYED: &str = "replayed";
/// Whether some attempt may have reached the service.
pub const MAY_HAVE_APPLIED: &str = "may_have_applied";

/// What stands for a key in logs: the first 8 bytes of the SHA-256 of the key's text, written as
/// 16 lowercase hex characters.
///
/// A cryptographic hash, so that the digest does not give the key back (a key may be guessable,
/// or a credential of sorts to the service), and a standard one, so that an operator holding a
/// key can find its events with any SHA-256 tool:
/// `printf %s "$KEY" | sha256sum | cut -c1-16`. Sixteen hex characters keep two keys of one
/// service apart in practice; they are not meant to be unique across all time. The executor
/// computes it only when a subscriber records the field, so an untraced client pays nothing.
///
/// ```
/// use retrykey_client::{Key, fields::KeyDigest};
///
/// let digest = KeyDigest::of(&Key::new("pay-123")?);
/// assert_eq!(digest.to_string().len(), 16);
/// assert!(!digest.to_string().contains("pay-123"));
/// # Ok::<(), retrykey::Error>(())
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct KeyDigest([u8; 8]);

impl KeyDigest {
    /// The digest of `key`.
    pub fn of(key: &Key) -> Self {
        let hash = Sha256::digest(key.as_str().as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(&hash[..8]);
        Self(first)
    }
}

impl fmt::Display for KeyDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Written byte by byte: sha2's digests do not implement `LowerHex`.
        self.0.iter().try_for_each(|byte| write!(f, "{byte:02x}"))
    }
}

impl fmt::Debug for KeyDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyDigest({self})")
    }
}
