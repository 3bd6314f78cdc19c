//! `Retry-After` is read in both of its forms, and malformed values are ignored.

use std::time::{Duration, SystemTime};

use retrykey_client::retry_after::parse;

fn at(seconds_since_epoch: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(seconds_since_epoch)
}

// Delay-seconds is a plain count of seconds.
#[test]
fn seconds_are_read() {
    assert_eq!(parse("0", at(0)), Some(Duration::ZERO));
    assert_eq!(parse(" 120 ", at(0)), Some(Duration::from_secs(120)));
}

// An HTTP date is measured from now; a date in the past means "now".
#[test]
fn http_dates_are_measured_from_now() {
    // Wed, 21 Oct 2015 07:28:00 GMT is 1445412480 seconds after the epoch.
    let date = "Wed, 21 Oct 2015 07:28:00 GMT";
    assert_eq!(
        parse(date, at(1_445_412_450)),
        Some(Duration::from_secs(30))
    );
    assert_eq!(parse(date, at(1_445_412_999)), Some(Duration::ZERO));
}

// Anything else is not a Retry-After: the executor falls back to its own backoff.
#[test]
fn malformed_values_are_ignored() {
    for value in [
        "",
        "soon",
        "-5",
        "1.5",
        "99999999999999999999999",
        "21 Oct 2015",
    ] {
        assert_eq!(parse(value, at(0)), None, "{value:?}");
    }
}
