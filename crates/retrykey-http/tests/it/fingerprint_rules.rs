//! What the fingerprint covers: method, path with query, caller, body (JSON canonicalised).

use http::{Method, Uri};
use retrykey_http::{Fingerprint, Scope};

const JSON: Option<&str> = Some("application/json");

fn fp(
    method: Method,
    uri: &str,
    scope: &Scope,
    content_type: Option<&str>,
    body: &str,
) -> Fingerprint {
    Fingerprint::of(
        &method,
        &uri.parse::<Uri>().unwrap(),
        scope,
        content_type,
        body.as_bytes(),
    )
}

fn post(body: &str) -> Fingerprint {
    fp(Method::POST, "/payments", &Scope::Anonymous, JSON, body)
}

// JSON bodies match regardless of key order and whitespace, nested objects included.
#[test]
fn json_order_and_whitespace_do_not_matter() {
    assert_eq!(
        post(r#"{"amount":5,"meta":{"b":[1,2],"a":null}}"#),
        post("{\n  \"meta\": { \"a\": null, \"b\": [ 1, 2 ] },\n  \"amount\": 5\n}")
    );
    let merchant_json = |body| {
        fp(
            Method::POST,
            "/p",
            &Scope::Anonymous,
            Some("application/merchant+json; charset=utf-8"),
            body,
        )
    };
    assert_eq!(
        merchant_json(r#"{"a":1,"b":2}"#),
        merchant_json(r#"{"b":2,"a":1}"#)
    );
}

// Values, array order and types still matter.
#[test]
fn json_values_matter() {
    assert_ne!(post(r#"{"amount":5}"#), post(r#"{"amount":6}"#));
    assert_ne!(post(r#"{"amount":5}"#), post(r#"{"amount":"5"}"#));
    assert_ne!(post("[1,2]"), post("[2,1]"));
}

// Non-integer numbers fall back to raw bytes, so two floats that print alike never merge.
#[test]
fn floats_are_compared_as_raw_bytes() {
    assert_eq!(post(r#"{"amount":5.5}"#), post(r#"{"amount":5.5}"#));
    assert_ne!(
        post(r#"{"amount":5.5,"x":1}"#),
        post(r#"{"x":1,"amount":5.5}"#)
    );
    assert_ne!(
        post(r#"{"amount":0.30000000000000001}"#),
        post(r#"{"amount":0.3}"#)
    );
}

// Other content types, and unparseable JSON, are hashed as raw bytes.
#[test]
fn other_bodies_are_raw_bytes() {
    let text = |body| {
        fp(
            Method::POST,
            "/p",
            &Scope::Anonymous,
            Some("text/plain"),
            body,
        )
    };
    assert_ne!(text(r#"{"a":1,"b":2}"#), text(r#"{"b":2,"a":1}"#));
    assert_ne!(text("a"), text("a "));
    assert_ne!(post("{not json"), post("{not  json"));
    assert_ne!(
        fp(Method::POST, "/p", &Scope::Anonymous, None, r#"{"a":1}"#),
        fp(Method::POST, "/p", &Scope::Anonymous, None, r#"{ "a":1}"#)
    );
}

// Method, path, query and caller are all part of the request's identity.
#[test]
fn method_target_and_caller_matter() {
    let base = post(r#"{"amount":5}"#);
    let same_body = |method, uri, scope: &Scope| fp(method, uri, scope, JSON, r#"{"amount":5}"#);
    assert_ne!(
        base,
        same_body(Method::PATCH, "/payments", &Scope::Anonymous)
    );
    assert_ne!(base, same_body(Method::POST, "/refunds", &Scope::Anonymous));
    assert_ne!(
        base,
        same_body(Method::POST, "/payments?currency=eur", &Scope::Anonymous)
    );
    assert_ne!(
        base,
        same_body(Method::POST, "/payments", &Scope::Caller("alice".into()))
    );
}
