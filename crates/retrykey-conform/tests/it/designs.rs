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

/// Payments by (caller's address, where keys are scoped by it; key).
type Kept = std::collections::HashMap<(Option<std::net::IpAddr>, String), u64>;

/// A server of the test's own, written byte for byte, that keeps a key per caller where the
/// caller is the address a request comes from (`scoped`), or keeps one key for everyone: 201 and
/// a new payment for a fresh key, the same answer marked as a replay for a known one.
async fn keyed_by_address(scoped: bool) -> (retrykey_conform::Base, tokio::task::JoinHandle<()>) {
    use std::sync::{Arc, Mutex};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let base = format!("http://{}", listener.local_addr().expect("its address"));
    let payments: Arc<Mutex<Kept>> = Arc::default();
    let task = tokio::spawn(async move {
        while let Ok((mut stream, peer)) = listener.accept().await {
            let payments = Arc::clone(&payments);
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut chunk = [0u8; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&chunk[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&request).to_ascii_lowercase();
                let key = head
                    .lines()
                    .find_map(|line| line.strip_prefix("idempotency-key:"))
                    .map(|value| value.trim().to_owned())
                    .unwrap_or_default();
                let owner = scoped.then_some(peer.ip());
                let (payment, replayed) = {
                    let mut kept = payments.lock().expect("the payments");
                    let made = kept.len() as u64 + 1;
                    match kept.get(&(owner, key.clone())) {
                        Some(payment) => (*payment, true),
                        None => {
                            kept.insert((owner, key), made);
                            (made, false)
                        }
                    }
                };
                let body = format!("{{\"payment\":{payment}}}");
                let marker = if replayed {
                    "idempotent-replayed: true\r\n"
                } else {
                    ""
                };
                let answer = format!(
                    "HTTP/1.1 201 Created\r\ncontent-type: application/json\r\n{marker}\
                     content-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(answer.as_bytes()).await;
            });
        }
    });
    (base.parse().expect("a loopback URL"), task)
}

// Callers told apart by the address they come from: the kit connects from two loopback
// addresses, and the server that keeps their keys apart passes where the one that does not
// fails, its witness naming each request's address.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callers_told_apart_by_address() {
    let mut profile = lab_profile();
    profile.effects = None;
    profile.callers = Some(retrykey_conform::profile::Callers {
        header: None,
        values: Vec::new(),
        addresses: vec!["127.0.0.1".parse().unwrap(), "127.0.0.2".parse().unwrap()],
    });
    let only = ["callers-are-kept-apart".to_owned()];
    let (base, server) = keyed_by_address(true).await;
    let report = retrykey_conform::run(&profile, &base, &only)
        .await
        .expect("known");
    assert_eq!(
        report.passed(),
        ["callers-are-kept-apart"],
        "{}",
        report.text()
    );
    server.abort();
    let (base, server) = keyed_by_address(false).await;
    let report = retrykey_conform::run(&profile, &base, &only)
        .await
        .expect("known");
    let CheckVerdict::Failed(failed) = &report.checks[0].verdict else {
        panic!("one key for everyone: {}", report.text());
    };
    assert!(
        failed
            .witness
            .iter()
            .any(|line| line.sent.contains("(from 127.0.0.2)")),
        "{}",
        report.text()
    );
    server.abort();
}
