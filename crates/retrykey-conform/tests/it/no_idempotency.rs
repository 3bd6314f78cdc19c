//! A server with no idempotency at all: the payments handler served bare. It fails the checks
//! of a key's own promises, each with a witness of a few exchanges; every check that stands on
//! a replay is not judged and points at the one that failed; and it passes the four that any
//! handler passes, with no key to keep or to leave stuck.

use retrykey_conform::{CHECKS, CheckVerdict, MAX_WITNESS};

use crate::servers::{bare, lab_profile};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_keys_fails_every_promise_of_one() {
    let served = bare().await;
    let report = retrykey_conform::run(&lab_profile(), &served.base(), &[])
        .await
        .expect("known checks");
    assert_eq!(
        report.passed(),
        [
            "first-request-succeeds",
            "keyless-callers-never-share-an-answer",
            "server-error-releases-or-replays",
            "throwing-handler-leaves-no-stuck-key"
        ],
        "{}",
        report.text()
    );
    assert_eq!(
        report.failed(),
        [
            "retry-replays-the-first-answer",
            "missing-key-is-refused",
            "empty-key-is-no-key",
            "malformed-key-is-refused",
            "overlong-key-is-refused",
            "repeated-key-header-is-refused"
        ],
        "{}",
        report.text()
    );
    // One defect, one failing row: the rest stand on a replay, and say where it failed.
    // Each check after the replay's that names it, or names one that does.
    let mut standing: Vec<&str> = Vec::new();
    for check in CHECKS {
        let footing = ["retry-replays-the-first-answer"].iter().chain(&standing);
        if footing.clone().any(|name| check.after.contains(name)) {
            standing.push(check.name);
        }
    }
    assert_eq!(report.skipped(), standing, "{}", report.text());
    for check in &report.checks {
        if let CheckVerdict::Skipped { reason } = &check.verdict {
            assert!(
                reason.starts_with("not judged: the retry is not a replay"),
                "{reason}"
            );
            assert!(
                reason.ends_with(", see retry-replays-the-first-answer"),
                "{reason}"
            );
        }
    }
    for check in &report.checks {
        if let CheckVerdict::Failed(failure) = &check.verdict {
            let shown = failure.witness.len();
            assert!(
                (1..=MAX_WITNESS).contains(&shown),
                "{}: {shown} exchanges",
                check.name
            );
            // Shrunk to the smallest run that fails: one operation, one duplicate, one key.
            if let Some(size) = failure.size {
                assert_eq!(size, 1, "{} kept a run of size {size}", check.name);
            }
        }
    }
    // Every request the kit sent ran the handler: nothing stood between them.
    let charges = served.payments.charges().await.expect("the charges");
    assert!(charges > 0);
    // Four handler runs charged nothing: the two asked to fail and the two asked to panic, each
    // a check's and the one that proved its header first.
    assert_eq!(served.payments.attempts(), charges + 4);
    served.server.stop().await;
}

// The witness of a replay that never came shows the two exchanges that make the point: the
// first request ran, and so did its retry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_replay_is_witnessed_by_two_exchanges() {
    let served = bare().await;
    let only = ["retry-replays-the-first-answer".to_owned()];
    let report = retrykey_conform::run(&lab_profile(), &served.base(), &only)
        .await
        .expect("known checks");
    let CheckVerdict::Failed(failure) = &report.checks[0].verdict else {
        panic!("a bare handler replays nothing: {}", report.text());
    };
    let keyed: Vec<&str> = failure
        .witness
        .iter()
        .filter(|line| line.sent.starts_with("POST /payments "))
        .map(|line| line.got.as_str())
        .collect();
    assert_eq!(keyed.len(), 2, "{}", report.text());
    assert!(
        keyed
            .iter()
            .all(|got| got.starts_with("201") && !got.contains("Idempotent-Replayed"))
    );
    assert_ne!(keyed[0], keyed[1], "two payments, two answers");
    served.server.stop().await;
}
