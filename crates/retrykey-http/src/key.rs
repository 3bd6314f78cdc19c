//! The `Idempotency-Key` header, the caller's scope, and the digest a store keeps instead of both.
//!
//! # Example
//!
//! ```
//! use http::HeaderMap;
//! use retrykey_http::{EntryId, IdempotencyKey, Scope};
//!
//! let mut headers = HeaderMap::new();
//! headers.insert("idempotency-key", "\"pay-123\"".parse()?);
//! let key = IdempotencyKey::from_headers(&headers)?.expect("the header is there");
//! assert_eq!(key.as_str(), "pay-123");
//!
//! // Two callers using the same key land on different entries.
//! let alice = EntryId::new(&Scope::Caller("alice".into()), &key);
//! let bob = EntryId::new(&Scope::Caller("bob".into()), &key);
//! assert_ne!(alice, bob);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;

use http::request::Parts;
use http::{HeaderMap, HeaderName, header};
use sha2::{Digest, Sha256};

use crate::KeyHeaderProblem;

/// The header name, as the IETF draft spells it.
pub const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");

/// The longest key accepted, in characters (keys are ASCII, so also in bytes).
pub const MAX_KEY_CHARS: usize = 255;

/// A validated idempotency key, as the client chose it.
///
/// Its `Debug` output never shows the key: keys can carry meaning (an order number) and must
/// not end up raw in logs.
#[derive(Clone, PartialEq, Eq)]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    /// Reads the key from request headers: `Ok(None)` when there is no such header.
    ///
    /// Accepts the draft's structured-field string (`"abc"`) and a bare token (`abc`); both
    /// name the same key. Two header lines, an empty value, a malformed value or a key over
    /// 255 characters are refused.
    pub fn from_headers(headers: &HeaderMap) -> Result<Option<Self>, KeyHeaderProblem> {
        let mut values = headers.get_all(IDEMPOTENCY_KEY).iter();
        let Some(first) = values.next() else {
            return Ok(None);
        };
        if values.next().is_some() {
            return Err(KeyHeaderProblem::Repeated);
        }
        Self::parse(first.as_bytes()).map(Some)
    }

    /// Parses one header value.
    pub fn parse(raw: &[u8]) -> Result<Self, KeyHeaderProblem> {
        let raw = raw.trim_ascii();
        let key = match raw.first() {
            None => return Err(KeyHeaderProblem::Empty),
            Some(b'"') => parse_quoted(&raw[1..])?,
            Some(_) => parse_token(raw)?,
        };
        if key.is_empty() {
            return Err(KeyHeaderProblem::Empty);
        }
        if key.len() > MAX_KEY_CHARS {
            return Err(KeyHeaderProblem::TooLong);
        }
        Ok(Self(key))
    }

    /// The key's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("IdempotencyKey(<redacted>)")
    }
}

/// The inside of a structured-field string: printable ASCII, `\"` and `\\` the only escapes,
/// closed by a quote that ends the value.
fn parse_quoted(rest: &[u8]) -> Result<String, KeyHeaderProblem> {
    let mut key = String::new();
    let mut bytes = rest.iter();
    while let Some(&byte) = bytes.next() {
        match byte {
            b'"' if bytes.as_slice().is_empty() => return Ok(key),
            b'\\' => match bytes.next() {
                Some(&escaped @ (b'"' | b'\\')) => key.push(escaped as char),
                _ => return Err(KeyHeaderProblem::Malformed),
            },
            b' '..=b'~' if byte != b'"' => key.push(byte as char),
            _ => return Err(KeyHeaderProblem::Malformed),
        }
    }
    Err(KeyHeaderProblem::Malformed) // no closing quote
}

/// A bare token: visible ASCII without quotes, backslashes, commas or semicolons (which would
/// make it a list or carry parameters).
fn parse_token(raw: &[u8]) -> Result<String, KeyHeaderProblem> {
    let ok = |b: &u8| matches!(b, b'!'..=b'~') && !matches!(b, b'"' | b'\\' | b',' | b';');
    if raw.iter().all(ok) {
        Ok(String::from_utf8_lossy(raw).into_owned())
    } else {
        Err(KeyHeaderProblem::Malformed)
    }
}

/// Whose key it is: keys are chosen by clients, so two callers may pick the same one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Scope {
    /// No authenticated caller: all anonymous requests share this one scope.
    Anonymous,
    /// An authenticated caller, named by whatever the service trusts (an account id).
    Caller(String),
}

impl Scope {
    /// The demo's notion of a caller: `Authorization: Bearer <name>`, otherwise anonymous.
    ///
    /// A real service puts its authenticated account here instead (see
    /// [`crate::Builder::scope`]); the bearer value is only ever hashed, never stored.
    pub fn from_bearer(parts: &Parts) -> Self {
        parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim())
            .filter(|token| !token.is_empty())
            .map_or(Scope::Anonymous, |token| Scope::Caller(token.to_owned()))
    }

    /// Feeds the scope into a hash, unambiguously (length-prefixed, tagged).
    pub(crate) fn hash_into(&self, hasher: &mut Sha256) {
        match self {
            Scope::Anonymous => hasher.update([0u8]),
            Scope::Caller(name) => {
                hasher.update([1u8]);
                hash_field(hasher, name.as_bytes());
            }
        }
    }
}

/// Writes a length-prefixed field, so `("ab", "c")` and `("a", "bc")` hash differently.
pub(crate) fn hash_field(hasher: &mut Sha256, bytes: &[u8]) {
    hasher.update((bytes.len() as u64).to_be_bytes());
    hasher.update(bytes);
}

/// The name of one stored entry: a SHA-256 of the caller's scope and the key.
///
/// Stores index by this digest, so neither the raw key nor the caller's credential is kept,
/// and one caller's key can never name another caller's entry.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct EntryId([u8; 32]);

/// A digest is already evenly spread: its first eight bytes are plenty for a keyed hash
/// map, and cheaper to hash than all 32. (Equal ids still hash equal.)
impl std::hash::Hash for EntryId {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let mut head = [0u8; 8];
        head.copy_from_slice(&self.0[..8]);
        state.write_u64(u64::from_le_bytes(head));
    }
}

impl EntryId {
    /// The entry for `key` as used by `scope`.
    pub fn new(scope: &Scope, key: &IdempotencyKey) -> Self {
        let mut hasher = Sha256::new();
        hasher.update(b"retrykey-http entry v1\n");
        scope.hash_into(&mut hasher);
        hash_field(&mut hasher, key.as_str().as_bytes());
        Self(hasher.finalize().into())
    }

    /// The digest bytes (what a database store would use as its primary key).
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// Rebuilds an entry from its stored bytes: a service that keeps an operation's entry in
    /// its own rows (to finish it later) reads it back with this.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }
}

/// Short and safe for logs: the first 6 bytes of the digest, in hex.
impl fmt::Debug for EntryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EntryId({})", hex(&self.0[..6]))
    }
}

/// Lower-case hex of some bytes (sha2 0.11 digests have no `{:x}`).
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut out, byte| {
        let _ = write!(out, "{byte:02x}");
        out
    })
}
