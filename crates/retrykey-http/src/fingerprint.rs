//! The request fingerprint: what a key is bound to, so a key reused for another request is caught.
//!
//! # Example
//!
//! ```
//! use http::{Method, Uri};
//! use retrykey_http::{Fingerprint, Scope};
//!
//! let uri: Uri = "/payments".parse()?;
//! let json = Some("application/json");
//! let a = Fingerprint::of(&Method::POST, &uri, &Scope::Anonymous, json, br#"{"amount":5,"to":"x"}"#);
//! let b = Fingerprint::of(&Method::POST, &uri, &Scope::Anonymous, json, b"{ \"to\": \"x\", \"amount\": 5 }");
//! let c = Fingerprint::of(&Method::POST, &uri, &Scope::Anonymous, json, br#"{"amount":6,"to":"x"}"#);
//! assert_eq!(a, b); // key order and whitespace do not matter in JSON
//! assert_ne!(a, c); // the amount does
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;

use http::{Method, Uri};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::Scope;
use crate::key::{hash_field, hex};

/// A SHA-256 over method, path with query, caller scope and body.
///
/// A JSON body (a `Content-Type` of `application/json` or `…+json`) is hashed in a canonical
/// form: keys sorted, no whitespace. Two exceptions keep that safe: a body holding a
/// non-integer number is hashed as raw bytes (re-printing a float can merge two different
/// values), and so is any body that does not parse. Every other body is hashed as raw bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint([u8; 32]);

impl Fingerprint {
    /// The fingerprint of one request.
    pub fn of(
        method: &Method,
        uri: &Uri,
        scope: &Scope,
        content_type: Option<&str>,
        body: &[u8],
    ) -> Self {
        let mut hasher = Sha256::new();
        hasher.update(b"retrykey-http fingerprint v1\n");
        hash_field(&mut hasher, method.as_str().as_bytes());
        let target = uri.path_and_query().map_or("/", |pq| pq.as_str());
        hash_field(&mut hasher, target.as_bytes());
        scope.hash_into(&mut hasher);
        match content_type
            .filter(|ct| is_json(ct))
            .and_then(|_| canonical_json(body))
        {
            Some(canonical) => {
                hasher.update(b"J");
                hash_field(&mut hasher, &canonical);
            }
            None => {
                hasher.update(b"R");
                hash_field(&mut hasher, body);
            }
        }
        Self(hasher.finalize().into())
    }

    /// Rebuilds a fingerprint from stored bytes (for stores that persist it).
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The digest bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({})", hex(&self.0[..6]))
    }
}

/// `application/json`, or any `type/subtype+json`, parameters ignored.
fn is_json(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("application/json")
        || essence
            .rsplit_once('+')
            .is_some_and(|(_, suffix)| suffix.eq_ignore_ascii_case("json"))
}

/// The body re-printed with sorted keys and no whitespace; `None` when that is not safe.
fn canonical_json(body: &[u8]) -> Option<Vec<u8>> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let mut out = Vec::with_capacity(body.len());
    write_canonical(&value, &mut out).then_some(out)
}

/// Writes `value` canonically; false if it holds a number that may not survive re-printing.
fn write_canonical(value: &Value, out: &mut Vec<u8>) -> bool {
    match value {
        Value::Null | Value::Bool(_) | Value::String(_) => {
            serde_json::to_writer(&mut *out, value).is_ok()
        }
        Value::Number(number) if number.is_f64() => false,
        Value::Number(number) => {
            out.extend_from_slice(number.to_string().as_bytes());
            true
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                if !write_canonical(item, out) {
                    return false;
                }
            }
            out.push(b']');
            true
        }
        Value::Object(map) => {
            // Sorted here, not by the map type: another crate enabling serde_json's
            // `preserve_order` must not change fingerprints.
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push(b'{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                if serde_json::to_writer(&mut *out, key).is_err() {
                    return false;
                }
                out.push(b':');
                if !write_canonical(item, out) {
                    return false;
                }
            }
            out.push(b'}');
            true
        }
    }
}
