//! Why a transport could not carry an attempt: the typed source behind [`Failure::Refused`] and
//! [`Failure::Lost`](crate::Failure::Lost).
//!
//! The retry loop only needs to know *whether* the request may have left (the [`Failure`]
//! variant says that); a caller that logs, alerts or falls back needs to know *what* broke. This
//! enum keeps the original error as its [`source`](std::error::Error::source), so a caller can
//! match on the case, read an I/O error's kind, or downcast the HTTP client's error.
//!
//! # Example
//!
//! ```
//! use std::io;
//! use retrykey_client::{Failure, TransportError};
//!
//! let failure = Failure::Refused(io::Error::from(io::ErrorKind::ConnectionRefused).into());
//! match &failure {
//!     Failure::Refused(TransportError::Io(error)) => {
//!         assert_eq!(error.kind(), io::ErrorKind::ConnectionRefused);
//!     }
//!     other => panic!("{other:?}"),
//! }
//! assert_eq!(failure.to_string(), "connection refused (connection refused)");
//! ```
//!
//! [`Failure::Refused`]: crate::Failure::Refused
//! [`Failure`]: crate::Failure

use std::error::Error as StdError;
use std::fmt;
use std::io;
use std::sync::Arc;

/// What went wrong below the service's answer: the connection, the bytes, or the request itself.
///
/// Shared (`Arc`) rather than boxed so that a [`Failure`](crate::Failure), and the
/// [`Outcome`](crate::Outcome) that reports it, stay `Clone`. Two values are equal when they are
/// the same case and read the same, as the core's storage errors are compared.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum TransportError {
    /// A socket operation failed. Displayed as its kind (`connection refused`); the operating
    /// system's own message is the source.
    Io(Arc<io::Error>),
    /// The HTTP client failed (connect, send, or reading the body).
    #[cfg(feature = "http")]
    Http(Arc<reqwest::Error>),
    /// The request the caller described cannot be sent (a header name or value that HTTP
    /// cannot carry, a header the adapter owns, a URL that does not parse): nothing left.
    InvalidRequest(Arc<str>),
    /// The key holds a character the transport's key header cannot carry: nothing left.
    KeyNotSendable {
        /// The offending character's position in the key, counted in characters from 0.
        at: usize,
    },
    /// The peer closed the connection after the request was sent and before its reply.
    Closed,
    /// The reply arrived but could not be read in the protocol's grammar.
    UnreadableReply {
        /// The reply as received.
        line: String,
    },
    /// A fault switch dropped the reply after the service committed (the in-memory adapter's
    /// lost reply).
    ReplyDropped,
    /// Any other transport's error, kept as it was raised (downcast it to read it).
    Other(Arc<dyn StdError + Send + Sync>),
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(error) => write!(f, "{}", error.kind()),
            #[cfg(feature = "http")]
            Self::Http(error) => write!(f, "{error}"),
            Self::InvalidRequest(problem) => write!(f, "the request cannot be sent: {problem}"),
            Self::KeyNotSendable { at } => write!(
                f,
                "character {at} of the key cannot be carried in the key header"
            ),
            Self::Closed => f.write_str("connection closed before the reply"),
            Self::UnreadableReply { line } => write!(f, "unreadable reply {line:?}"),
            Self::ReplyDropped => f.write_str("reply lost after the commit"),
            Self::Other(error) => write!(f, "{error}"),
        }
    }
}

/// An I/O error is the source of its kind's text (the `io::Error` itself, not the `Arc` around
/// it, so a caller can downcast it). The HTTP client's error and any other are shown as they
/// are, so their sources are theirs: match the variant to reach the error itself.
impl StdError for TransportError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            Self::Io(error) => Some(&**error),
            #[cfg(feature = "http")]
            Self::Http(error) => error.source(),
            Self::Other(error) => error.source(),
            Self::InvalidRequest(_) | Self::KeyNotSendable { .. } | Self::Closed => None,
            Self::UnreadableReply { .. } => None,
            Self::ReplyDropped => None,
        }
    }
}

impl TransportError {
    /// Wraps any error of a transport this crate does not know.
    pub fn other(error: impl StdError + Send + Sync + 'static) -> Self {
        Self::Other(Arc::new(error))
    }
}

impl PartialEq for TransportError {
    fn eq(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.to_string() == other.to_string()
    }
}

impl Eq for TransportError {}

impl From<io::Error> for TransportError {
    fn from(error: io::Error) -> Self {
        Self::Io(Arc::new(error))
    }
}

#[cfg(feature = "http")]
impl From<reqwest::Error> for TransportError {
    fn from(error: reqwest::Error) -> Self {
        Self::Http(Arc::new(error))
    }
}

/// A transport error known only by its description (tests, scripted faults).
impl From<&str> for TransportError {
    fn from(description: &str) -> Self {
        Self::other(Described(description.to_owned()))
    }
}

/// A transport error known only by its description (tests, scripted faults).
impl From<String> for TransportError {
    fn from(description: String) -> Self {
        Self::other(Described(description))
    }
}

/// An error that is only its text: what `From<&str>` wraps.
#[derive(Debug)]
struct Described(String);

impl fmt::Display for Described {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl StdError for Described {}
