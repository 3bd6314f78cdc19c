//! The profiles the kit ships are read as they say; a profile or a base URL the kit cannot use
//! is refused with a typed error naming the field.

use retrykey_conform::profile::DuplicatePolicy;
use retrykey_conform::{Base, BaseError, CHECKS, PAYMENTS_PROFILE, Profile, ProfileError};

fn refused_field(text: &str) -> &'static str {
    match Profile::parse(text) {
        Err(ProfileError::Invalid { field, .. }) => field,
        other => panic!("expected an invalid field, got {other:?}"),
    }
}

const MINIMAL: &str = r#"
[request]
path = "/orders"
body = '{"item": {n}}'
[replay]
header = "Idempotent-Replayed"
value = "true"
"#;

#[test]
fn the_lab_profile_and_a_minimal_one_are_read() {
    let lab = Profile::parse(PAYMENTS_PROFILE).expect("valid");
    assert_eq!(lab.body(42), r#"{"amount":42}"#);
    assert_eq!(
        lab.request.changed_path.as_deref(),
        Some("/payments/elsewhere")
    );
    let minimal = Profile::parse(MINIMAL).expect("valid");
    assert_eq!(minimal.request.method, "POST");
    assert!(!minimal.key.required && minimal.callers.is_none());
}

/// The book's worked example of a server that is not the lab's.
const ORDERS_EXAMPLE: &str = include_str!("../../profiles/orders-example.toml");

// The example is read as its comments describe it, and the kit skips exactly the checks whose
// sections it leaves out, each with the reason the book gives.
#[test]
fn the_orders_example_is_read_and_skips_what_it_leaves_out() {
    let orders = Profile::parse(ORDERS_EXAMPLE).expect("valid");
    assert_eq!(orders.base, None);
    assert_eq!(orders.body(3), r#"{"sku":"BOOK-42","quantity":3}"#);
    assert_eq!(
        (
            orders.request.path.as_str(),
            orders.request.changed_path.as_deref()
        ),
        ("/v1/orders", Some("/v1/refunds"))
    );
    assert!(orders.key.required && !orders.key.bare_tokens);
    let in_flight = orders.in_flight.as_ref().expect("declared");
    assert_eq!(in_flight.policy, DuplicatePolicy::Conflict);
    let callers = orders.callers.as_ref().expect("declared");
    assert_eq!(callers.header.as_deref(), Some("X-Account"));
    assert!(orders.fail_once.is_none() && orders.effects.is_none());
    let skipped: Vec<(&str, String)> = CHECKS
        .iter()
        .filter_map(|check| (check.skipped)(&orders).map(|why| (check.name, why)))
        .collect();
    assert_eq!(
        skipped,
        [
            (
                "server-error-releases-or-replays",
                "the profile declares no [fail_once] header".to_owned()
            ),
            (
                "key-expires-when-declared",
                "the profile's expiry (86400000 ms, and 1000 ms of grace) is longer than the kit waits (10000 ms)"
                    .to_owned()
            ),
            (
                "expired-key-runs-once-more",
                "the profile's expiry (86400000 ms, and 1000 ms of grace) is longer than the kit waits (10000 ms)"
                    .to_owned()
            ),
            (
                "effects-match-operations",
                "the profile declares no effects path".to_owned()
            ),
        ]
    );
    // The lab's own profile leaves nothing out.
    let lab = Profile::parse(PAYMENTS_PROFILE).expect("valid");
    assert!(CHECKS.iter().all(|check| (check.skipped)(&lab).is_none()));
}

#[test]
fn a_body_without_its_placeholder_is_refused() {
    assert_eq!(refused_field(&MINIMAL.replace("{n}", "1")), "request.body");
}

#[test]
fn callers_must_be_two_different_ones() {
    let one = format!("{MINIMAL}[callers]\nheader = \"Authorization\"\nvalues = [\"a\", \"a\"]\n");
    assert_eq!(refused_field(&one), "callers.values");
    // Told apart by address: two loopback addresses, and no header beside them.
    let far = format!("{MINIMAL}[callers]\naddresses = [\"10.0.0.1\", \"10.0.0.2\"]\n");
    assert_eq!(refused_field(&far), "callers.addresses");
    let same = format!("{MINIMAL}[callers]\naddresses = [\"127.0.0.2\", \"127.0.0.2\"]\n");
    assert_eq!(refused_field(&same), "callers.addresses");
    let both = format!(
        "{MINIMAL}[callers]\nheader = \"A\"\nvalues = [\"a\", \"b\"]\naddresses = [\"127.0.0.1\", \"127.0.0.2\"]\n"
    );
    assert_eq!(refused_field(&both), "callers.addresses");
    let fine = format!("{MINIMAL}[callers]\naddresses = [\"127.0.0.1\", \"127.0.0.2\"]\n");
    let fine = Profile::parse(&fine).expect("two loopback addresses");
    let callers = fine.callers.expect("declared");
    assert_eq!(callers.describe(1), "from 127.0.0.2");
}

#[test]
fn a_path_must_be_absolute_and_sizes_not_zero() {
    assert_eq!(
        refused_field(&MINIMAL.replace("\"/orders\"", "\"orders\"")),
        "request.path"
    );
    let zero = format!("{MINIMAL}[scale]\nduplicates = 0\n");
    assert_eq!(refused_field(&zero), "scale.duplicates");
}

#[test]
fn unknown_fields_are_refused_not_ignored() {
    let typo = MINIMAL.replace("[replay]", "[replay]\nheaders = \"x\"");
    assert!(matches!(Profile::parse(&typo), Err(ProfileError::Parse(_))));
}

#[test]
fn base_urls_are_plain_http_with_a_host() {
    let base: Base = "http://127.0.0.1:8080/api/".parse().expect("valid");
    assert_eq!(
        (base.host.as_str(), base.port, base.prefix.as_str()),
        ("127.0.0.1", 8080, "/api")
    );
    assert!(matches!(
        "https://127.0.0.1".parse::<Base>(),
        Err(BaseError::NotHttp(_))
    ));
    assert!(matches!(
        "http://:80".parse::<Base>(),
        Err(BaseError::BadAuthority(_))
    ));
    assert!(matches!(
        "http://h:99999".parse::<Base>(),
        Err(BaseError::BadAuthority(_))
    ));
}

#[test]
fn headers_the_kit_writes_or_cannot_write_are_refused() {
    let own = MINIMAL.replace(
        "[replay]",
        "[request.headers]\nidempotency-key = \"x\"\n[replay]",
    );
    assert_eq!(refused_field(&own), "request.headers");
    let broken =
        format!("{MINIMAL}[callers]\nheader = \"X-Account\"\nvalues = [\"a\\r\\nX: 1\", \"b\"]\n");
    assert_eq!(refused_field(&broken), "callers.values");
    let spaced = format!("{MINIMAL}[fail_once]\nheader = \"X Flaky\"\n");
    assert_eq!(refused_field(&spaced), "fail_once.header");
}

#[test]
fn waits_of_zero_are_refused() {
    let slow = format!(
        "{MINIMAL}[in_flight]\npolicy = \"wait\"\nslow_header = {{ name = \"X-Delay\", value = \"1\" }}\nslow_ms = 0\n"
    );
    assert_eq!(refused_field(&slow), "in_flight.slow_ms");
    assert_eq!(
        refused_field(&format!("{MINIMAL}[expiry]\nafter_ms = 0\n")),
        "expiry.after_ms"
    );
}
