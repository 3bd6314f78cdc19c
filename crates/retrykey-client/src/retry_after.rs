//! Reading a `Retry-After` value: a number of seconds, or an HTTP date.

use std::time::{Duration, SystemTime};

/// The wait a `Retry-After` value asks for, measured from `now`; `None` if it is malformed.
///
/// Both forms of RFC 9110 are accepted: delay-seconds (`"120"`) and an HTTP-date
/// (`"Wed, 21 Oct 2015 07:28:00 GMT"`). A date in the past means "now" (zero). The executor
/// waits this long instead of its own backoff, and stops early if it does not fit the budget.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use retrykey_client::retry_after::parse;
///
/// let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_470);
/// assert_eq!(parse("3", now), Some(Duration::from_secs(3)));
/// assert_eq!(parse("Wed, 21 Oct 2015 07:28:00 GMT", now), Some(Duration::from_secs(10)));
/// assert_eq!(parse("soon", now), None);
/// ```
pub fn parse(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return value.parse().ok().map(Duration::from_secs);
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}
