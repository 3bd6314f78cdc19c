//! A kept response as table columns, and back: one encoding for both databases.

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use retrykey_http::StoredResponse;

/// The columns that hold a finished entry's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseColumns {
    pub status: i32,
    pub headers: Vec<u8>,
    pub body: Vec<u8>,
    pub whole: bool,
    pub size: i64,
}

impl ResponseColumns {
    pub fn of(response: &StoredResponse) -> Self {
        Self {
            status: i32::from(response.status.as_u16()),
            headers: encode_headers(&response.headers),
            body: response.body.to_vec(),
            whole: response.whole,
            size: i64::try_from(response.size()).unwrap_or(i64::MAX),
        }
    }

    /// The response again; `None` when the columns do not hold a valid one (a row written by
    /// something else), which the stores report as an error rather than replay.
    pub(crate) fn into_response(self) -> Option<StoredResponse> {
        Some(StoredResponse {
            status: StatusCode::from_u16(u16::try_from(self.status).ok()?).ok()?,
            headers: decode_headers(&self.headers)?,
            body: Bytes::from(self.body),
            whole: self.whole,
        })
    }
}

/// Each header as: name length (2 bytes), name, value length (4 bytes), value. Header values
/// may hold any visible byte, so text would not do.
fn encode_headers(headers: &HeaderMap) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, value) in headers {
        let name = name.as_str().as_bytes();
        out.extend_from_slice(&u16::try_from(name.len()).unwrap_or(u16::MAX).to_be_bytes());
        out.extend_from_slice(name);
        out.extend_from_slice(&u32::try_from(value.len()).unwrap_or(u32::MAX).to_be_bytes());
        out.extend_from_slice(value.as_bytes());
    }
    out
}

fn decode_headers(mut bytes: &[u8]) -> Option<HeaderMap> {
    let mut headers = HeaderMap::new();
    while !bytes.is_empty() {
        let (len, rest) = bytes.split_first_chunk::<2>()?;
        let (name, rest) = rest.split_at_checked(usize::from(u16::from_be_bytes(*len)))?;
        let (len, rest) = rest.split_first_chunk::<4>()?;
        let (value, rest) =
            rest.split_at_checked(usize::try_from(u32::from_be_bytes(*len)).ok()?)?;
        headers.append(
            HeaderName::from_bytes(name).ok()?,
            HeaderValue::from_bytes(value).ok()?,
        );
        bytes = rest;
    }
    Some(headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    // A response survives the trip through the columns, repeated headers and odd bytes included.
    #[test]
    fn columns_round_trip() {
        let mut headers = HeaderMap::new();
        headers.append("x-a", HeaderValue::from_static("1"));
        headers.append("x-a", HeaderValue::from_static("2"));
        headers.append("location", HeaderValue::from_bytes(b"/p/\xe9").unwrap());
        let response = StoredResponse {
            status: StatusCode::CREATED,
            headers,
            body: Bytes::from_static(b"{\"payment\":1}"),
            whole: true,
        };
        let back = ResponseColumns::of(&response).into_response();
        assert_eq!(back, Some(response));
    }

    // Truncated header bytes are refused, not half read.
    #[test]
    fn truncated_headers_are_refused() {
        let mut headers = HeaderMap::new();
        headers.append("x-a", HeaderValue::from_static("value"));
        let encoded = encode_headers(&headers);
        assert_eq!(decode_headers(&encoded[..encoded.len() - 1]), None);
    }
}
