//! A response as the store keeps it, and how it is replayed.
//!
//! # Example
//!
//! ```
//! use http::{Response, StatusCode};
//! use retrykey_http::StoredResponse;
//!
//! let original = Response::builder()
//!     .status(201)
//!     .header("content-type", "application/json")
//!     .header("set-cookie", "session=abc")
//!     .body(())?;
//! let (parts, ()) = original.into_parts();
//! let stored = StoredResponse::whole(&parts, b"{\"payment\":1}");
//!
//! let replay = stored.replay();
//! assert_eq!(replay.status(), StatusCode::CREATED);
//! assert_eq!(replay.headers()["idempotent-replayed"], "true");
//! assert!(replay.headers().get("set-cookie").is_none()); // never replayed
//! # Ok::<(), http::Error>(())
//! ```

use std::ops::Range;

use bytes::Bytes;
use http::response::Parts;
use http::{HeaderMap, HeaderName, HeaderValue, Response, StatusCode, header};

use crate::Problem;
use crate::body::{Body, full};

/// Marks a replayed answer. Informational: the replay *is* the real result.
pub const IDEMPOTENT_REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

/// Headers that belong to one connection or one moment, never to the stored answer.
fn never_replayed(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "set-cookie"
            | "date"
            | "connection"
            | "keep-alive"
            | "proxy-connection"
            | "transfer-encoding"
            | "upgrade"
            | "te"
            | "trailer"
            | "proxy-authenticate"
            | "content-length" // recomputed from the stored body
    )
}

/// The outcome of a first attempt, kept so every retry gets the same answer.
///
/// One allocation holds it: the kept headers, encoded, then the body, in one buffer. Cloning
/// it shares the buffer, and a replay's body and header values are slices of it, not copies.
/// The headers' encoding is the one the database stores keep in a column
/// ([`StoredResponse::encoded_headers`]): each header as its name's length (2 bytes, big-endian),
/// the name, its value's length (4 bytes), the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResponse {
    status: StatusCode,
    /// False when the body was not kept (too large, or broken mid-stream): a replay then
    /// carries only status, `Location` and a short problem body saying so.
    whole: bool,
    /// Where the body starts in `bytes`: the encoded headers come before it.
    body_at: usize,
    bytes: Bytes,
}

impl StoredResponse {
    /// A complete answer: `status`, exactly these headers, and `body`.
    pub fn new<'h>(
        status: StatusCode,
        headers: impl IntoIterator<Item = (&'h HeaderName, &'h HeaderValue)> + Clone,
        body: &[u8],
    ) -> Self {
        Self::encode(status, || headers.clone(), body, true)
    }

    /// Keeps a complete response: its status, the headers worth replaying, and `body`.
    pub fn whole(parts: &Parts, body: &[u8]) -> Self {
        let listed = listed_in_connection(&parts.headers);
        let kept = || {
            parts
                .headers
                .iter()
                .filter(|(name, _)| !never_replayed(name) && !listed.contains(name))
        };
        Self::encode(parts.status, kept, body, true)
    }

    /// Keeps the summary of a response whose body was too large: status and `Location`.
    pub fn summary(parts: &Parts) -> Self {
        let name = header::LOCATION;
        let location = parts.headers.get(&name).map(|value| (&name, value));
        Self::encode(parts.status, || location, b"", false)
    }

    /// A response from its stored parts (a database row): `None` when `headers` is not a
    /// valid encoding, so that a damaged record is refused rather than replayed.
    pub fn from_encoded(
        status: StatusCode,
        headers: &[u8],
        body: &[u8],
        whole: bool,
    ) -> Option<Self> {
        for (name, value) in Encoded(headers) {
            HeaderName::from_bytes(name?).ok()?;
            HeaderValue::from_bytes(value).ok()?;
        }
        let mut bytes = Vec::with_capacity(headers.len() + body.len());
        bytes.extend_from_slice(headers);
        bytes.extend_from_slice(body);
        Some(Self {
            status,
            whole,
            body_at: headers.len(),
            bytes: Bytes::from(bytes),
        })
    }

    /// Writes status, headers and body into one buffer of exactly the size they need (so
    /// `headers` gives the same headers twice: once to measure, once to write).
    fn encode<'h, I>(status: StatusCode, headers: impl Fn() -> I, body: &[u8], whole: bool) -> Self
    where
        I: IntoIterator<Item = (&'h HeaderName, &'h HeaderValue)>,
    {
        let encoded: usize = headers()
            .into_iter()
            .map(|(name, value)| 2 + name.as_str().len() + 4 + value.len())
            .sum();
        let mut bytes = Vec::with_capacity(encoded + body.len());
        for (name, value) in headers() {
            // A header name is at most 64 KiB and a value well under 4 GiB in any server.
            let name = name.as_str().as_bytes();
            bytes.extend_from_slice(&u16::try_from(name.len()).unwrap_or(u16::MAX).to_be_bytes());
            bytes.extend_from_slice(name);
            bytes.extend_from_slice(&u32::try_from(value.len()).unwrap_or(u32::MAX).to_be_bytes());
            bytes.extend_from_slice(value.as_bytes());
        }
        bytes.extend_from_slice(body);
        Self {
            status,
            whole,
            body_at: encoded,
            // Filled to its capacity, so the buffer becomes the `Bytes` without another allocation.
            bytes: Bytes::from(bytes),
        }
    }

    /// The original status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// Whether the body was kept; false for a summary (status and `Location` only).
    pub fn is_whole(&self) -> bool {
        self.whole
    }

    /// The original body, or empty for a summary.
    pub fn body(&self) -> &[u8] {
        &self.bytes[self.body_at..]
    }

    /// The kept headers, in their stored encoding.
    pub fn encoded_headers(&self) -> &[u8] {
        &self.bytes[..self.body_at]
    }

    /// The kept headers, as name and value bytes, in their original order.
    pub fn headers(&self) -> impl Iterator<Item = (&str, &[u8])> {
        Encoded(self.encoded_headers()).filter_map(|(name, value)| {
            // Names were written from `HeaderName`s or checked on the way in.
            Some((std::str::from_utf8(name?).ok()?, value))
        })
    }

    /// Roughly how many bytes this record occupies, for the store's byte budget.
    pub fn size(&self) -> usize {
        self.bytes.len() + size_of::<Self>()
    }

    /// The kept headers as a map, values sharing the buffer; `extra` more slots reserved.
    fn header_map(&self, extra: usize) -> HeaderMap {
        let mut map = HeaderMap::with_capacity(self.headers().count() + extra);
        for (name, value) in self.header_ranges() {
            let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(&self.bytes[name]),
                HeaderValue::from_maybe_shared(self.bytes.slice(value)),
            ) else {
                continue; // not reached: every kept header was valid when kept
            };
            map.append(name, value);
        }
        map
    }

    /// Where each header's name and value lie in the buffer.
    fn header_ranges(&self) -> impl Iterator<Item = (Range<usize>, Range<usize>)> + '_ {
        let start = self.bytes.as_ptr() as usize;
        Encoded(self.encoded_headers()).filter_map(move |(name, value)| {
            let name = name?;
            let at = |part: &[u8]| {
                let from = part.as_ptr() as usize - start;
                from..from + part.len()
            };
            Some((at(name), at(value)))
        })
    }

    /// The stored answer as a first response: status, kept headers and body, no marker.
    pub fn response(&self) -> Response<Body> {
        self.answer(0)
    }

    /// Status, kept headers and body, with room for `extra` more headers.
    fn answer(&self, extra: usize) -> Response<Body> {
        let mut response = Response::new(full(self.bytes.slice(self.body_at..)));
        *response.status_mut() = self.status;
        *response.headers_mut() = self.header_map(extra);
        response
    }

    /// The answer to a retry: the stored response, marked `Idempotent-Replayed: true`.
    pub fn replay(&self) -> Response<Body> {
        crate::observe::replayed(self.status);
        let mut response = if self.whole {
            // Room for the marker below, so adding it does not grow the map again.
            self.answer(1)
        } else {
            let detail = "The first attempt ended with this status; its body was not kept (too \
                          large, or broken while being sent). Fetch the result from Location if \
                          one is given.";
            let mut response =
                Problem::ResponseNotStored.response_with_status(self.status, Some(detail));
            if let Some(location) = self.header_map(0).remove(header::LOCATION) {
                response.headers_mut().insert(header::LOCATION, location);
            }
            response
        };
        response
            .headers_mut()
            .insert(IDEMPOTENT_REPLAYED, HeaderValue::from_static("true"));
        response
    }
}

/// The names a response lists in its `Connection` header: per-connection, so never replayed.
fn listed_in_connection(headers: &HeaderMap) -> Vec<HeaderName> {
    headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .filter_map(|name| HeaderName::try_from(name.trim()).ok())
        .collect()
}

/// Walks encoded headers: each item is a name and a value, or `None` for the name once the
/// encoding is cut short (and then nothing more).
struct Encoded<'a>(&'a [u8]);

impl<'a> Iterator for Encoded<'a> {
    type Item = (Option<&'a [u8]>, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        if self.0.is_empty() {
            return None;
        }
        let item = split_header(self.0);
        self.0 = item.map_or(&[], |(_, _, rest)| rest);
        Some(item.map_or((None, &[][..]), |(name, value, _)| (Some(name), value)))
    }
}

/// One encoded header off the front: its name, its value and what follows.
fn split_header(bytes: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    let (len, rest) = bytes.split_first_chunk::<2>()?;
    let (name, rest) = rest.split_at_checked(usize::from(u16::from_be_bytes(*len)))?;
    let (len, rest) = rest.split_first_chunk::<4>()?;
    let (value, rest) = rest.split_at_checked(usize::try_from(u32::from_be_bytes(*len)).ok()?)?;
    Some((name, value, rest))
}

/// A response extension by which a handler says its answer is not the key's to keep: the layer
/// gives the key back, as after a server error, and the answer goes to this request alone.
///
/// For a handler whose own rows bind the key to the request that began them (a phase that
/// committed under it): another request under the key, let in once the key was given back, is
/// refused with this, and the first request's retry still finds the key free to resume.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NotKept;
