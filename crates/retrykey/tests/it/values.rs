//! The small value types on their own: what a key and a request keep, how they print, and when
//! two errors are the same error. The contract suite drives them through a ledger; these pin the
//! details a caller reads directly.

use retrykey::{Error, Key, Ledger, Limits, Request, RequestProblem, Store};

#[test]
fn key_keeps_the_text_the_client_sent_and_hides_it_from_debug() {
    let key = Key::new("op-42").expect("a valid key");
    assert_eq!(key.as_str(), "op-42");
    assert_eq!(key.to_string(), "op-42");
    assert_eq!("op-42".parse::<Key>(), Ok(key.clone()));
    // Keys stay out of logs by accident: Debug shows only the length.
    assert_eq!(format!("{key:?}"), "Key(<5 bytes>)");
}

#[test]
fn request_keeps_its_job_and_units() {
    let request = Request::new("resize", 3).expect("a valid request");
    assert_eq!((request.job(), request.units()), ("resize", 3));
    let parsed = Request::parse("resize", " 3 ").expect("digits with spaces around");
    assert_eq!(parsed, request);
}

#[test]
fn a_lone_or_trailing_minus_is_not_a_number_but_a_minus_count_is_negative() {
    let problem = |units| match Request::parse("resize", units) {
        Err(Error::InvalidRequest(problem)) => problem,
        other => panic!("{units:?} was accepted: {other:?}"),
    };
    assert_eq!(problem("-7"), RequestProblem::NegativeUnits);
    assert_eq!(problem("-"), RequestProblem::NotANumber);
    assert_eq!(problem("-7x"), RequestProblem::NotANumber);
    assert_eq!(problem("7x"), RequestProblem::NotANumber);
    assert_eq!(problem(""), RequestProblem::NotANumber);
    assert_eq!(problem("0"), RequestProblem::ZeroUnits);
    assert_eq!(
        problem("18446744073709551616"),
        RequestProblem::UnitsOverflow
    );
}

#[test]
fn errors_are_equal_only_when_kind_and_details_match() {
    let storage = |message: &str| Error::Storage(message.into());
    assert_eq!(storage("disk full"), storage("disk full"));
    assert_ne!(storage("disk full"), storage("connection reset"));
    assert_ne!(Error::Conflict, Error::Capacity { max_records: 1 });
    assert_ne!(storage("conflict"), Error::Conflict);
    assert_ne!(
        Error::Capacity { max_records: 1 },
        Error::Capacity { max_records: 2 }
    );
    let ceiling = |units| Error::Ceiling {
        units,
        total: 5,
        max_units: 10,
    };
    assert_eq!(ceiling(6), ceiling(6));
    assert_ne!(ceiling(6), ceiling(7));
}

#[test]
fn store_reports_its_limits_and_the_request_each_key_was_first_used_with() {
    let limits = Limits {
        max_records: 3,
        max_units: 50,
    };
    let store = Store::with_limits(limits);
    assert_eq!(store.limits(), limits);

    let key = Key::new("op-1").expect("a valid key");
    assert_eq!(store.recorded_request(&key), None);
    let request = Request::new("resize", 4).expect("a valid request");
    store.apply(&key, &request).expect("applied");
    // A conflicting retry leaves the first request in place.
    let changed = Request::new("resize", 5).expect("a valid request");
    assert_eq!(store.apply(&key, &changed), Err(Error::Conflict));
    assert_eq!(store.recorded_request(&key), Some(request));
}

// The oracle the value-type checks use, on inputs whose answer is known by hand: if it were
// wrong, the checks would hold the key to the wrong rules.
#[test]
fn the_oracle_counts_and_names_as_the_docs_say() {
    use retrykey::KeyProblem;
    use retrykey_contract::values::{
        oracle_is_control, oracle_key, oracle_request, oracle_utf8_len,
    };
    assert_eq!(oracle_utf8_len("aé€😀"), 1 + 2 + 3 + 4);
    assert_eq!(oracle_key(""), Err(KeyProblem::Empty));
    assert_eq!(
        oracle_key(&"é".repeat(128)),
        Err(KeyProblem::TooLong { bytes: 256 })
    );
    assert_eq!(oracle_key(&"a".repeat(255)), Ok(()));
    assert_eq!(
        oracle_key("ab\u{85}c"),
        Err(KeyProblem::ControlCharacter { at: 2 })
    );
    assert_eq!(oracle_key("a\u{A0}b"), Ok(()));
    assert_eq!(oracle_request("x", 0), Err(RequestProblem::ZeroUnits));
    assert_eq!(
        oracle_request("a\tb", 1),
        Err(RequestProblem::JobControlCharacter)
    );
    assert!(oracle_is_control('\u{7F}') && !oracle_is_control('\u{A0}'));
}
