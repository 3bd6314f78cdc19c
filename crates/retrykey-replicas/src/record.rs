//! A kept response as table columns, and back: one encoding for both databases.

use http::StatusCode;
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
            status: i32::from(response.status().as_u16()),
            headers: response.encoded_headers().to_vec(),
            body: response.body().to_vec(),
            whole: response.is_whole(),
            size: i64::try_from(response.size()).unwrap_or(i64::MAX),
        }
    }

    /// The response again; `None` when the columns do not hold a valid one (a row written by
    /// something else), which the stores report as an error rather than replay. The headers
    /// column holds the kept headers in [`StoredResponse`]'s own encoding.
    pub(crate) fn into_response(self) -> Option<StoredResponse> {
        let status = StatusCode::from_u16(u16::try_from(self.status).ok()?).ok()?;
        StoredResponse::from_encoded(status, &self.headers, &self.body, self.whole)
    }
}

#[cfg(test)]
mod tests {
    use http::{HeaderName, HeaderValue};

    use super::*;

    // A response survives the trip through the columns, repeated headers and odd bytes included.
    #[test]
    fn columns_round_trip() {
        let (x_a, location) = (HeaderName::from_static("x-a"), http::header::LOCATION);
        let headers = [
            (&x_a, &HeaderValue::from_static("1")),
            (&x_a, &HeaderValue::from_static("2")),
            (&location, &HeaderValue::from_bytes(b"/p/\xe9").unwrap()),
        ];
        let response = StoredResponse::new(StatusCode::CREATED, headers, b"{\"payment\":1}");
        let back = ResponseColumns::of(&response).into_response();
        assert_eq!(back, Some(response));
    }

    // Truncated header bytes are refused, not half read.
    #[test]
    fn truncated_headers_are_refused() {
        let x_a = HeaderName::from_static("x-a");
        let response = StoredResponse::new(
            StatusCode::CREATED,
            [(&x_a, &HeaderValue::from_static("value"))],
            b"",
        );
        let mut columns = ResponseColumns::of(&response);
        columns.headers.pop();
        assert_eq!(columns.into_response(), None);
    }
}
