//! The operation key in the `Idempotency-Key` header's grammar: the one encoder the lab's
//! senders share, matched by the layer's parser (`retrykey_http::IdempotencyKey::parse`).
//!
//! # Example
//!
//! ```
//! use retrykey::Key;
//! use retrykey_client::{Error, adapters::KeyHeader};
//!
//! // A key that is a structured-field token goes bare; any other printable ASCII is quoted.
//! assert_eq!(KeyHeader::new(&Key::new("pay-123")?)?.as_str(), "pay-123");
//! assert_eq!(KeyHeader::new(&Key::new("a,b")?)?.as_str(), r#""a,b""#);
//! assert_eq!(KeyHeader::new(&Key::new(r#""q""#)?)?.as_str(), r#""\"q\"""#);
//!
//! // The header carries ASCII only: the key is refused before anything is sent.
//! let refused = KeyHeader::new(&Key::new("op\u{e9}")?).unwrap_err();
//! assert!(matches!(refused, Error::KeyNotSendable { at: 2 }));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;

use retrykey::Key;

use crate::Error;

/// A key written as an `Idempotency-Key` value: a bare token where that reads back as the same
/// text, else a structured-field string (RFC 8941 §3.3.3) with `"` and `\` escaped.
///
/// Two different keys never share a value, and the layer reads each value back as exactly the
/// key's text. No length check is needed: a [`Key`] is at most [`retrykey::MAX_KEY_BYTES`]
/// (255) bytes, and the layer's limit of 255 characters counts the key, not its quotes and
/// escapes. Like the key, its `Debug` output hides the text.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyHeader(String);

impl KeyHeader {
    /// Encodes `key`, or refuses it with [`Error::KeyNotSendable`] when it holds a character a
    /// structured-field string cannot carry (anything but printable ASCII, `' '..='~'`).
    pub fn new(key: &Key) -> Result<Self, Error> {
        let text = key.as_str();
        if let Some(at) = text.chars().position(|c| !matches!(c, ' '..='~')) {
            return Err(Error::KeyNotSendable { at });
        }
        if is_token(text) {
            return Ok(Self(text.to_owned()));
        }
        let mut quoted = String::with_capacity(text.len() + 2);
        quoted.push('"');
        for c in text.chars() {
            if matches!(c, '"' | '\\') {
                quoted.push('\\');
            }
            quoted.push(c);
        }
        quoted.push('"');
        Ok(Self(quoted))
    }

    /// The header value, ready to send.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for KeyHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyHeader(<{} bytes>)", self.0.len())
    }
}

/// An RFC 8941 token (`ALPHA` or `*`, then `tchar`, `:` or `/`). Every such token is also one
/// the layer reads bare and unchanged: none holds a quote, backslash, comma, semicolon or
/// whitespace. A key that merely passes the layer's looser bare rule (`1abc`, `{x}`) is
/// quoted instead, so that any structured-field parser reads it as the same text.
fn is_token(text: &str) -> bool {
    let mut bytes = text.bytes();
    let first_ok = bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'*');
    first_ok
        && bytes.all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'!' | b'#'
                        | b'$'
                        | b'%'
                        | b'&'
                        | b'\''
                        | b'*'
                        | b'+'
                        | b'-'
                        | b'.'
                        | b'^'
                        | b'_'
                        | b'`'
                        | b'|'
                        | b'~'
                        | b':'
                        | b'/'
                )
        })
}
