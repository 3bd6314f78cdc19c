//! The operation key: one logical operation's identity, chosen by the client.

use std::fmt;

use crate::{Error, KeyProblem, MAX_KEY_BYTES};

/// A validated operation key: non-empty, at most [`MAX_KEY_BYTES`] bytes, no control characters.
///
/// The client generates it once per logical operation and presents it unchanged on every
/// attempt. Its `Debug` output is redacted so that keys do not end up in logs by accident.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key(String);

impl Key {
    /// Validates `key`.
    ///
    /// ```
    /// use retrykey::{Error, Key, KeyProblem};
    ///
    /// assert!(Key::new("op-1").is_ok());
    /// assert_eq!(Key::new(""), Err(Error::InvalidKey(KeyProblem::Empty)));
    /// ```
    // ANCHOR: key_new
    pub fn new(key: impl Into<String>) -> Result<Self, Error> {
        let key = key.into();
        if key.is_empty() {
            return Err(Error::InvalidKey(KeyProblem::Empty));
        }
        if key.len() > MAX_KEY_BYTES {
            return Err(Error::InvalidKey(KeyProblem::TooLong { bytes: key.len() }));
        }
        if let Some(at) = key.chars().position(char::is_control) {
            return Err(Error::InvalidKey(KeyProblem::ControlCharacter { at }));
        }
        Ok(Self(key))
    }
    // ANCHOR_END: key_new

    /// The key as the client sent it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

// ANCHOR: key_debug
impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key(<{} bytes>)", self.0.len())
    }
}
// ANCHOR_END: key_debug

impl std::str::FromStr for Key {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::new(s)
    }
}
