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

use std::borrow::Cow;
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
        let canonical: Option<Cow<'_, [u8]>> = if !content_type.is_some_and(is_json) {
            None
        } else if already_canonical(body) {
            // The common case for machine-written JSON: no tree to build and re-print.
            Some(Cow::Borrowed(body))
        } else {
            canonical_json(body).map(Cow::Owned)
        };
        match canonical {
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

/// Whether `body` is exactly what [`canonical_json`] would print for it, found in one pass
/// without building a tree. Conservative: `false` only means "take the long way".
///
/// It accepts valid UTF-8 JSON with no whitespace, object keys in strictly increasing byte
/// order (so no repeats), strings with nothing to escape, integers of at most 18 digits
/// without a leading zero or a negative zero (so they fit `i64` and `u64` and print back the
/// same), and at most 64 levels of nesting. For such a body, parsing and re-printing it
/// gives back the very same bytes (a property test checks this).
fn already_canonical(body: &[u8]) -> bool {
    let mut scanner = Scanner { bytes: body, at: 0 };
    std::str::from_utf8(body).is_ok() && scanner.value(0) && scanner.at == body.len()
}

/// The deepest nesting [`already_canonical`] follows (the parser's own limit is 128).
const MAX_DEPTH: usize = 64;

/// A cursor over a JSON text, for [`already_canonical`].
struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        self.at += usize::from(found);
        found
    }

    fn value(&mut self, depth: usize) -> bool {
        match self.peek() {
            Some(b'{') => depth < MAX_DEPTH && self.object(depth + 1),
            Some(b'[') => depth < MAX_DEPTH && self.array(depth + 1),
            Some(b'"') => self.string().is_some(),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => self.integer(),
            _ => false,
        }
    }

    fn literal(&mut self, word: &[u8]) -> bool {
        let found = self.bytes[self.at..].starts_with(word);
        if found {
            self.at += word.len();
        }
        found
    }

    fn integer(&mut self) -> bool {
        let negative = self.eat(b'-');
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        let plain = match &self.bytes[start..self.at] {
            [] => false,
            [b'0'] => !negative, // `-0` parses as a float
            [b'0', ..] => false, // not JSON
            digits => digits.len() <= 18,
        };
        // A fraction or an exponent makes it a float, which is hashed as raw bytes.
        plain && !matches!(self.peek(), Some(b'.' | b'e' | b'E'))
    }

    /// A string with nothing to escape; its contents.
    fn string(&mut self) -> Option<&'a [u8]> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.at;
        loop {
            match self.peek()? {
                b'"' => break,
                b'\\' | 0x00..=0x1f => return None,
                _ => self.at += 1,
            }
        }
        let contents = &self.bytes[start..self.at];
        self.at += 1;
        Some(contents)
    }

    fn object(&mut self, depth: usize) -> bool {
        self.at += 1; // `{`
        if self.eat(b'}') {
            return true;
        }
        let mut previous: Option<&[u8]> = None;
        loop {
            let Some(key) = self.string() else {
                return false;
            };
            if previous.is_some_and(|previous| previous >= key) {
                return false; // out of order, or repeated
            }
            previous = Some(key);
            if !(self.eat(b':') && self.value(depth)) {
                return false;
            }
            if self.eat(b'}') {
                return true;
            }
            if !self.eat(b',') {
                return false;
            }
        }
    }

    fn array(&mut self, depth: usize) -> bool {
        self.at += 1; // `[`
        if self.eat(b']') {
            return true;
        }
        loop {
            if !self.value(depth) {
                return false;
            }
            if self.eat(b']') {
                return true;
            }
            if !self.eat(b',') {
                return false;
            }
        }
    }
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

#[cfg(test)]
mod tests {
    //! The shortcut must never change a fingerprint: whatever it accepts, the long way
    //! re-prints byte for byte.

    use super::{already_canonical, canonical_json};
    use proptest::prelude::*;

    /// Pieces from which near-JSON texts are assembled, valid and invalid alike.
    const PIECES: &[&str] = &[
        "{",
        "}",
        "[",
        "]",
        ":",
        ",",
        " ",
        "\"a\"",
        "\"b\"",
        "\"ab\"",
        "\"\"",
        "\"é\"",
        "\"\\n\"",
        "\"\\u0041\"",
        "\"\u{7f}\"",
        "0",
        "1",
        "-",
        "-0",
        "00",
        "12",
        "1.5",
        "1e3",
        "E",
        "123456789012345678",
        "1234567890123456789",
        "-9223372036854775808",
        "18446744073709551615",
        "true",
        "false",
        "null",
        "nul",
        "\"",
    ];

    fn near_json() -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(PIECES), 0..24).prop_map(|p| p.concat())
    }

    /// Compact JSON trees from a few keys and leaves, so that sorted, unsorted and repeated
    /// keys, odd numbers and escapes all come up often.
    fn json_tree() -> impl Strategy<Value = String> {
        const LEAVES: &[&str] = &[
            "null",
            "true",
            "false",
            "0",
            "-0",
            "7",
            "-7",
            "1.5",
            "2e1",
            "123456789012345678",
            "-123456789012345678",
            "99999999999999999999",
            "\"x\"",
            "\"\"",
            "\"é\"",
            "\"\\\"\"",
            "\"\\u00e9\"",
            "\"\\/\"",
        ];
        const KEYS: &[&str] = &["a", "b", "ab", "B", "é", ""];
        let leaf = prop::sample::select(LEAVES).prop_map(str::to_owned);
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4)
                    .prop_map(|items| format!("[{}]", items.join(","))),
                prop::collection::vec((prop::sample::select(KEYS), inner), 0..4).prop_map(
                    |members| {
                        let members: Vec<String> = members
                            .iter()
                            .map(|(k, v)| format!("\"{k}\":{v}"))
                            .collect();
                        format!("{{{}}}", members.join(","))
                    }
                ),
            ]
        })
    }

    proptest! {
        // Whatever the shortcut accepts is exactly its own canonical form.
        #[test]
        fn accepted_bodies_are_their_own_canonical_form(
            text in prop_oneof![near_json(), json_tree()]
        ) {
            if already_canonical(text.as_bytes()) {
                prop_assert_eq!(canonical_json(text.as_bytes()), Some(text.into_bytes()));
            }
        }
    }

    // The shortcut does apply to ordinary compact, sorted bodies (it is not vacuous).
    #[test]
    fn compact_sorted_bodies_take_the_shortcut() {
        for body in [
            r#"{"amount":5}"#,
            r#"{"amount":-12,"currency":"EUR","items":[1,2,{"a":null,"b":true}],"to":"ü"}"#,
            "[]",
            "{}",
            "0",
            r#""plain""#,
        ] {
            assert!(already_canonical(body.as_bytes()), "{body}");
            assert_eq!(
                canonical_json(body.as_bytes()),
                Some(body.as_bytes().to_vec())
            );
        }
    }

    // Anything whitespace, order, escapes, floats or odd numbers could change goes the long way.
    #[test]
    fn bodies_that_need_care_take_the_long_way() {
        for body in [
            r#"{"to":"x","amount":5}"#,
            r#"{"amount": 5}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"a":"\u0041"}"#,
            r#"{"a":1.0}"#,
            r#"{"a":1e2}"#,
            "-0",
            "01",
            "1234567890123456789",
            " {}",
            "{}x",
            "",
        ] {
            assert!(!already_canonical(body.as_bytes()), "{body}");
        }
        let deep = format!("{}{}", "[".repeat(65), "]".repeat(65));
        assert!(!already_canonical(deep.as_bytes()));
        assert!(!already_canonical(b"\"\xff\""));
    }
}
