//! What a failed attempt reports, and the verdicts the classifier can reach on it.

use std::fmt;
use std::time::Duration;

use crate::TransportError;

/// Why an attempt did not succeed, in terms that matter for retrying.
///
/// The variants separate "the request never left" from "the request left and the reply did
/// not come back": only the second one can hide a committed effect. A transport failure keeps
/// what broke as a [`TransportError`], which is also its [`source`](std::error::Error::source).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The connection could not be opened: the request was not sent, so nothing happened.
    Refused(TransportError),
    /// No reply within the time the attempt was given. The request may have taken effect.
    TimedOut,
    /// The connection broke after the request was sent. The request may have taken effect.
    Lost(TransportError),
    /// The service answered, with a status that is not a success.
    Status(StatusFailure),
}

impl Failure {
    /// `false` only when the request certainly never reached the service.
    pub fn may_have_applied(&self) -> bool {
        !matches!(self, Self::Refused(_))
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Refused(why) => write!(f, "connection refused ({why})"),
            Self::TimedOut => write!(f, "timed out waiting for the reply"),
            Self::Lost(why) => write!(f, "connection lost after sending ({why})"),
            Self::Status(status) => write!(f, "{status}"),
        }
    }
}

impl std::error::Error for Failure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Refused(error) | Self::Lost(error) => Some(error),
            // The answer is the failure itself, and its text is already this one's.
            Self::TimedOut | Self::Status(_) => None,
        }
    }
}

/// A service's non-success answer, in HTTP terms (the TCP and in-memory adapters map onto them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusFailure {
    /// The status: 409 conflict, 422 invalid, 429 slow down, 503 unavailable, ...
    pub status: u16,
    /// How long the service asked the client to wait (`Retry-After`), if it said.
    pub retry_after: Option<Duration>,
    /// For a 409: the key's first request is still running, so the answer is "not yet",
    /// not "different request".
    pub in_progress: bool,
    /// The service's explanation, for people.
    pub detail: String,
}

impl StatusFailure {
    /// An answer with `status` and `detail`, no `Retry-After`, not in progress.
    pub fn new(status: u16, detail: impl Into<String>) -> Self {
        Self {
            status,
            retry_after: None,
            in_progress: false,
            detail: detail.into(),
        }
    }

    /// The same answer with a `Retry-After`.
    pub fn retry_after(self, wait: Duration) -> Self {
        Self {
            retry_after: Some(wait),
            ..self
        }
    }
}

impl fmt::Display for StatusFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "status {}: {}", self.status, self.detail)?;
        if let Some(wait) = self.retry_after {
            write!(f, " (retry after {} s)", wait.as_secs())?;
        }
        Ok(())
    }
}

impl std::error::Error for StatusFailure {}

/// What the classifier decided about a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Transient: another attempt with the same key may succeed.
    Retry,
    /// Definitive: the service refused this request; repeating it unchanged cannot help.
    Reject,
    /// Neither definitive nor safe to retry: stop and report the outcome as unknown.
    GiveUp,
}
