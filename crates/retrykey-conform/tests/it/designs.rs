//! Servers that choose otherwise than the lab where the draft lets them: each passes once its
//! profile says what it chose, a check that does not apply says why, and a hook of the profile
//! that does nothing is named before any check relies on it.

use retrykey_conform::{CHECKS, CheckVerdict, KitReport, Profile};
use retrykey_replicas::StoreChoice;

use crate::servers::{Served, lab_profile, payments_keyed_per_path, payments_on};

async fn kit(profile: &Profile, served: &Served, only: &[&str]) -> KitReport {
    let only: Vec<String> = only.iter().map(|name| name.to_string()).collect();
    retrykey_conform::run(profile, &served.base(), &only)
        .await
        .expect("known checks")
}

fn reason<'r>(report: &'r KitReport, name: &str) -> &'r str {
    match report.checks.iter().find(|check| check.name == name) {
        Some(check) => match &check.verdict {
            CheckVerdict::Skipped { reason } => reason,
            other => panic!("{name} was not skipped: {other:?}"),
        },
        None => panic!("{name} did not run"),
    }
}

fn first_breach<'r>(report: &'r KitReport, name: &str) -> &'r str {
    match report.checks.iter().find(|check| check.name == name) {
        Some(check) => match &check.verdict {
            CheckVerdict::Failed(failed) => &failed.breaches[0],
            other => panic!("{name} did not fail: {other:?}"),
        },
        None => panic!("{name} did not run"),
    }
}

// Keys taken whole, as most libraries take them: the kit sends them bare, and the two checks
// of the draft's syntax do not apply.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opaque_keys_skip_the_syntax_checks_and_pass_the_rest() {
    let served = payments_on(StoreChoice::Memory).await;
    let mut profile = lab_profile();
    profile.key.bare_tokens = false;
    profile.key.opaque = true;
    let report = kit(&profile, &served, &[]).await;
    assert_eq!(report.failed(), Vec::<&str>::new(), "{}", report.text());
    assert_eq!(
        report.skipped(),
        ["malformed-key-is-refused", "repeated-key-header-is-refused"]
    );
    let opaque = "the profile declares keys opaque: any header value is a key";
    assert_eq!(reason(&report, "malformed-key-is-refused"), opaque);
    assert_eq!(report.passed().len(), CHECKS.len() - 2);
    // Every handler run charged, but the two asked to fail: no bare key ran twice.
    let charges = served.payments.charges().await.expect("the charges");
    assert_eq!(charges, served.payments.attempts() - 4);
    served.server.stop().await;
}

// The status a refused key gets is the profile's: the lab's 400 is not what this one declares.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_refusal_status_is_the_one_expected() {
    let served = payments_on(StoreChoice::Memory).await;
    let mut profile = lab_profile();
    profile.key.refusal_status = 422;
    let report = kit(&profile, &served, &["missing-key-is-refused"]).await;
    assert_eq!(
        first_breach(&report, "missing-key-is-refused"),
        "a request without a key got 400, not 422"
    );
    assert_eq!(served.payments.attempts(), 0, "a refused key runs nothing");
    served.server.stop().await;
}

// A server whose keyed route is its only one answers the changed path 404: nothing ran and
// nothing was replayed, which is what the check judges once the profile declares it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_with_no_route_is_judged_by_nothing_run() {
    let served = payments_keyed_per_path().await;
    let only = ["changed-path-is-refused"];
    let report = kit(&lab_profile(), &served, &only).await;
    assert_eq!(
        first_breach(&report, "changed-path-is-refused"),
        "the request on another path under a used key got 404, not 422"
    );
    let mut profile = lab_profile();
    profile.request.changed_path_status = 404;
    let report = kit(&profile, &served, &only).await;
    assert_eq!(report.passed(), only, "{}", report.text());
    // Two runs of the check, each one charge: the 404s and the replays charged nothing.
    let charges = served.payments.charges().await.expect("the charges");
    assert_eq!(charges, 2);
    served.server.stop().await;
}

// A typo in the fail-once header: the kit says the hook does nothing, and judges nothing by it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fail_once_header_that_does_nothing_is_named() {
    let served = payments_on(StoreChoice::Memory).await;
    let mut profile = lab_profile();
    if let Some(fail) = profile.fail_once.as_mut() {
        fail.header = "X-Flakey".to_owned();
    }
    let report = kit(&profile, &served, &["server-error-releases-or-replays"]).await;
    let why = reason(&report, "server-error-releases-or-replays");
    assert!(
        why.starts_with("not judged: the fail-once header X-Flakey: ")
            && why.ends_with("does nothing here: a request with it was answered 201, not a 5xx"),
        "{why}"
    );
    // The one request that proved the header ran, and charged: nothing failed on purpose.
    assert_eq!(served.payments.attempts(), 1);
    assert_eq!(served.payments.charges().await.expect("the charges"), 1);
    served.server.stop().await;
}

// A server that takes only UUIDs, as the draft recommends clients make keys: declared, the kit
// sends keys in that form, every one a fresh UUID, and skips the length check they all pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uuid_keys_are_sent_as_uuids() {
    let served = crate::servers::bare().await;
    let mut profile = lab_profile();
    profile.key.format = retrykey_conform::profile::KeyFormat::Uuid;
    let only = ["retry-replays-the-first-answer", "overlong-key-is-refused"];
    let report = kit(&profile, &served, &only).await;
    assert_eq!(
        reason(&report, "overlong-key-is-refused"),
        "the profile's keys are UUIDs, all of one length"
    );
    let CheckVerdict::Failed(failed) = &report.checks[0].verdict else {
        panic!("a bare handler replays nothing: {}", report.text());
    };
    let keys: Vec<&str> = (failed.witness.iter())
        .filter_map(|line| line.sent.split("Idempotency-Key: \"").nth(1))
        .filter_map(|rest| rest.split('"').next())
        .collect();
    assert_eq!(keys.len(), 2, "{}", report.text());
    assert_eq!(keys[0], keys[1], "a retry reuses its key");
    let uuid = keys[0].as_bytes();
    let form = keys[0].split('-').map(str::len).collect::<Vec<_>>();
    assert_eq!(form, [8, 4, 4, 4, 12], "{}", keys[0]);
    assert_eq!(uuid[14], b'4', "version 4: {}", keys[0]);
    assert!(
        b"89ab".contains(&uuid[19]),
        "the RFC 4122 variant: {}",
        keys[0]
    );
    // Both requests ran the bare handler: the key was sent, and nothing kept it.
    assert_eq!(served.payments.charges().await.expect("the charges"), 2);
    served.server.stop().await;
}
