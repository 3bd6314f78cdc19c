//! The Idempotency-Key header: both accepted forms, and every refused shape.

use http::{HeaderMap, HeaderValue};
use retrykey_http::{EntryId, IdempotencyKey, KeyHeaderProblem, MAX_KEY_CHARS, Scope};

fn parse(raw: &str) -> Result<String, KeyHeaderProblem> {
    IdempotencyKey::parse(raw.as_bytes()).map(|key| key.as_str().to_owned())
}

// A structured-field string and a bare token are both accepted, and name the same key.
#[test]
fn quoted_and_bare_forms_are_accepted() {
    assert_eq!(
        parse("\"8e03978e-40d5-43e8-bc93-6894a57f9324\""),
        Ok("8e03978e-40d5-43e8-bc93-6894a57f9324".into())
    );
    assert_eq!(
        parse("8e03978e-40d5-43e8-bc93-6894a57f9324"),
        Ok("8e03978e-40d5-43e8-bc93-6894a57f9324".into())
    );
    assert_eq!(
        parse("  pay-1 "),
        Ok("pay-1".into()),
        "surrounding whitespace is not part of the key"
    );
}

// Inside quotes, only \" and \\ are escapes, and spaces are allowed.
#[test]
fn quoted_strings_follow_the_structured_field_rules() {
    assert_eq!(parse(r#""a \"b\" \\ c""#), Ok(r#"a "b" \ c"#.into()));
    assert_eq!(parse(r#""a\nb""#), Err(KeyHeaderProblem::Malformed));
    assert_eq!(parse("\"unclosed"), Err(KeyHeaderProblem::Malformed));
    assert_eq!(parse("\"a\"b\""), Err(KeyHeaderProblem::Malformed));
    assert_eq!(
        parse("\"caf\u{e9}\""),
        Err(KeyHeaderProblem::Malformed),
        "ASCII only"
    );
}

// Empty values, lists, parameters and spaces in bare tokens are refused.
#[test]
fn malformed_and_empty_values_are_refused() {
    assert_eq!(parse(""), Err(KeyHeaderProblem::Empty));
    assert_eq!(parse("   "), Err(KeyHeaderProblem::Empty));
    assert_eq!(parse("\"\""), Err(KeyHeaderProblem::Empty));
    for bad in ["a,b", "a;v=1", "a b", "a\"b", "a\\b"] {
        assert_eq!(parse(bad), Err(KeyHeaderProblem::Malformed), "{bad}");
    }
}

// 255 characters is the longest key; 256 is refused, quoted or not.
#[test]
fn keys_over_255_characters_are_refused() {
    let longest = "k".repeat(MAX_KEY_CHARS);
    assert_eq!(parse(&longest), Ok(longest.clone()));
    assert_eq!(
        parse(&format!("{longest}k")),
        Err(KeyHeaderProblem::TooLong)
    );
    assert_eq!(
        parse(&format!("\"{longest}k\"")),
        Err(KeyHeaderProblem::TooLong)
    );
}

// No header is not an error; two header lines are.
#[test]
fn absent_and_repeated_headers() {
    let mut headers = HeaderMap::new();
    assert_eq!(IdempotencyKey::from_headers(&headers), Ok(None));
    headers.append("idempotency-key", HeaderValue::from_static("one"));
    assert!(matches!(
        IdempotencyKey::from_headers(&headers),
        Ok(Some(_))
    ));
    headers.append("idempotency-key", HeaderValue::from_static("two"));
    assert_eq!(
        IdempotencyKey::from_headers(&headers),
        Err(KeyHeaderProblem::Repeated)
    );
}

// Keys never show in Debug output, and entries are per caller.
#[test]
fn keys_are_redacted_and_scoped() {
    let key = IdempotencyKey::parse(b"order-4711").unwrap();
    assert!(!format!("{key:?}").contains("4711"));
    let alice = EntryId::new(&Scope::Caller("alice".into()), &key);
    let bob = EntryId::new(&Scope::Caller("bob".into()), &key);
    let anonymous = EntryId::new(&Scope::Anonymous, &key);
    assert!(alice != bob && alice != anonymous && bob != anonymous);
    assert!(!format!("{alice:?}").contains("4711") && !format!("{alice:?}").contains("alice"));
}

// The demo's scope is the bearer token; anything else is anonymous.
#[test]
fn bearer_scope() {
    let parts = |auth: Option<&str>| {
        let mut request = http::Request::new(());
        if let Some(auth) = auth {
            request
                .headers_mut()
                .insert("authorization", auth.parse().unwrap());
        }
        request.into_parts().0
    };
    assert_eq!(
        Scope::from_bearer(&parts(Some("Bearer alice"))),
        Scope::Caller("alice".into())
    );
    assert_eq!(
        Scope::from_bearer(&parts(Some("bearer  bob "))),
        Scope::Caller("bob".into())
    );
    assert_eq!(
        Scope::from_bearer(&parts(Some("Basic YWxpY2U6"))),
        Scope::Anonymous
    );
    assert_eq!(
        Scope::from_bearer(&parts(Some("Bearer "))),
        Scope::Anonymous
    );
    assert_eq!(Scope::from_bearer(&parts(None)), Scope::Anonymous);
}
