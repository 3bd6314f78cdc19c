//! Plain `cargo test` confirms, in-process, that each Stage 4 variant still fails exactly its
//! declared HTTP checks: a variant fixed by accident, or broken in a new way, turns this red.
//! Each check runs its own server on 127.0.0.1 and forces its interleavings with gates, so the
//! failing set is the same on every run.

use std::collections::BTreeSet;
use std::sync::Arc;

use retrykey_http_checks::{LayerUnderTest, failing_checks};

fn assert_fails_as_declared(variant: &str, subject: LayerUnderTest) {
    retrykey_tests::assert_fails_as_declared(
        variant,
        4,
        &["http_suite::"],
        &failing_checks(&subject),
    );
}

// The correct layer fails no check: the baseline every variant is compared with.
#[test]
fn correct_layer_fails_nothing() {
    assert_eq!(failing_checks(&LayerUnderTest::correct()), BTreeSet::new());
}

// Each variant fails exactly the checks it declares.
#[test]
fn no_fingerprint_fails_as_declared() {
    let subject =
        LayerUnderTest::correct().with_engine(|b| b.engine(no_fingerprint::NoFingerprint));
    assert_fails_as_declared("no-fingerprint", subject);
}

#[test]
fn replay_5xx_fails_as_declared() {
    let subject = LayerUnderTest::correct().with_engine(|b| b.engine(replay_5xx::Replay5xx));
    assert_fails_as_declared("replay-5xx", subject);
}

#[test]
fn cancel_unsafe_fails_as_declared() {
    let subject = LayerUnderTest::correct().with_engine(|b| b.engine(cancel_unsafe::CancelUnsafe));
    assert_fails_as_declared("cancel-unsafe", subject);
}

#[test]
fn split_check_insert_fails_as_declared() {
    let subject = LayerUnderTest::correct()
        .with_store(|limits| Arc::new(split_check_insert::SplitCheckInsert::new(limits)));
    assert_fails_as_declared("split-check-insert", subject);
}

#[test]
fn evict_when_full_fails_as_declared() {
    let subject = LayerUnderTest::correct()
        .with_store(|limits| Arc::new(evict_when_full::EvictWhenFull::new(limits)));
    assert_fails_as_declared("evict-when-full", subject);
}

#[test]
fn unscoped_key_fails_as_declared() {
    let subject = LayerUnderTest::correct().with_engine(|b| b.engine(unscoped_key::UnscopedKey));
    assert_fails_as_declared("unscoped-key", subject);
}

#[test]
fn body_only_replay_fails_as_declared() {
    let subject =
        LayerUnderTest::correct().with_engine(|b| b.engine(body_only_replay::BodyOnlyReplay));
    assert_fails_as_declared("body-only-replay", subject);
}

#[test]
fn url_only_fingerprint_fails_as_declared() {
    let subject = LayerUnderTest::correct()
        .with_engine(|b| b.engine(url_only_fingerprint::UrlOnlyFingerprint));
    assert_fails_as_declared("url-only-fingerprint", subject);
}
