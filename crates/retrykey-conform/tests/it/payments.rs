//! The lab's payments server passes every check of the kit, on each store.

use retrykey_conform::{CHECKS, CheckVerdict, KitReport};
use retrykey_replicas::{Opened, PgEntries, PgPayments, StoreChoice};
use std::sync::Arc;

use crate::servers::{Served, lab_profile, options, payments, payments_on};

async fn kit_against(served: &Served) -> KitReport {
    retrykey_conform::run(&lab_profile(), &served.base(), &[])
        .await
        .expect("known checks")
}

/// Every check ran and passed; the server charged once per handler run that did not fail on
/// purpose (the 5xx check's, and the one that proves its header first), so no run was
/// repeated behind a replay.
async fn assert_conforms(served: Served) {
    let report = kit_against(&served).await;
    assert_eq!(report.failed(), Vec::<&str>::new(), "{}", report.text());
    assert_eq!(report.skipped(), Vec::<&str>::new(), "{}", report.text());
    assert_eq!(report.passed().len(), CHECKS.len());
    let charges = served.payments.charges().await.expect("the charges");
    assert_eq!(charges, served.payments.attempts() - 4, "{}", report.text());
    served.server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn payments_in_memory_conforms() {
    assert_conforms(payments_on(StoreChoice::Memory).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn payments_on_sqlite_conforms() {
    let file = retrykey_testkit::ScratchFile::new("conform");
    assert_conforms(payments_on(StoreChoice::Sqlite(file.path().to_owned())).await).await;
}

#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn payments_on_postgres_conforms() {
    let url = retrykey_durable_checks::admin::url();
    let store = PgEntries::throwaway(&url, options())
        .await
        .expect("a throwaway schema");
    let opened = Opened {
        ledger: Arc::new(PgPayments::new(&store)),
        store: Arc::new(store),
    };
    assert_conforms(payments(opened).await).await;
}

/// The named checks against an in-memory `payments`, with `profile` changed by `change`.
async fn only(checks: &[&str], change: impl FnOnce(&mut retrykey_conform::Profile)) -> KitReport {
    let served = payments_on(StoreChoice::Memory).await;
    let mut profile = lab_profile();
    change(&mut profile);
    let only: Vec<String> = checks.iter().map(|name| name.to_string()).collect();
    let report = retrykey_conform::run(&profile, &served.base(), &only)
        .await
        .expect("known checks");
    served.server.stop().await;
    report
}

// An API whose every request carries a service token in the header that also names the caller:
// the caller's value stands in for the token, and the two callers stay two.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_header_replaces_a_fixed_header_of_its_name() {
    let report = only(&["callers-are-kept-apart"], |profile| {
        profile
            .request
            .headers
            .insert("authorization".to_owned(), "Bearer service".to_owned());
    })
    .await;
    assert_eq!(
        report.passed(),
        ["callers-are-kept-apart"],
        "{}",
        report.text()
    );
}

// The marker's value in another letter case, or no marker at all: a replay is still a replay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_marker_in_any_case_or_none_at_all_still_conforms() {
    let checks = [
        "retry-replays-the-first-answer",
        "changed-body-is-422",
        "callers-are-kept-apart",
    ];
    let upper = only(&checks, |profile| {
        profile.replay.value = Some("TRUE".to_owned())
    })
    .await;
    assert_eq!(upper.passed(), checks, "{}", upper.text());
    let unmarked = only(&checks, |profile| profile.replay.header = None).await;
    assert_eq!(unmarked.passed(), checks, "{}", unmarked.text());
}

// A slow-request header the server ignores (a typo in the profile) is caught before the two
// checks that lean on it: they are not judged, and say why, rather than passing untested.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_header_that_does_nothing_is_named_and_its_checks_not_judged() {
    let served = payments_on(StoreChoice::Memory).await;
    let mut profile = lab_profile();
    let in_flight = profile
        .in_flight
        .as_mut()
        .expect("the lab declares a slow request");
    in_flight.slow_header.name = "X-Delai-Ms".to_owned();
    let only = [
        "first-request-succeeds",
        "duplicate-waits-or-conflicts",
        "disconnected-first-attempt-completes",
    ]
    .map(str::to_owned);
    let report = retrykey_conform::run(&profile, &served.base(), &only)
        .await
        .expect("known checks");
    assert_eq!(
        report.passed(),
        ["first-request-succeeds"],
        "{}",
        report.text()
    );
    assert_eq!(
        report.skipped(),
        [
            "duplicate-waits-or-conflicts",
            "disconnected-first-attempt-completes"
        ],
        "{}",
        report.text()
    );
    for check in &report.checks {
        if let CheckVerdict::Skipped { reason } = &check.verdict {
            assert!(
                reason.starts_with(
                    "not judged: the slow-request header X-Delai-Ms: 400 does nothing here"
                ),
                "{reason}"
            );
        }
    }
    served.server.stop().await;
}
