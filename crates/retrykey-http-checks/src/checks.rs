//! The checks themselves, one function per behaviour, each opened by the requirement it checks.

use std::time::Duration;

use retrykey_http::{BoxError, InFlight, MAX_KEY_CHARS, Problem, StoreLimits};
use retrykey_server::loopback::LoopbackReply;
use tokio::task::JoinHandle;

use crate::LayerUnderTest;
use crate::rig::{Rig, Setup, run, within, within_for};

const PAY: &str = r#"{"amount":5}"#;

fn key(key: &str) -> [(&str, &str); 1] {
    [("idempotency-key", key)]
}

async fn post(rig: &Rig, headers: &[(&str, &str)], body: &str) -> LoopbackReply {
    within("a POST", rig.client.post("/pay", headers, body.to_owned()))
        .await
        .unwrap_or_else(|error| panic!("POST failed at the transport level: {error}"))
}

/// Starts a POST in its own task, for a check that acts while the request runs.
fn spawn_post<const N: usize>(
    rig: &Rig,
    headers: [(&'static str, &'static str); N],
    body: &'static str,
) -> JoinHandle<Result<LoopbackReply, BoxError>> {
    let client = rig.client.clone();
    tokio::spawn(async move { client.post("/pay", &headers, body).await })
}

#[track_caller]
fn assert_problem(reply: &LoopbackReply, problem: Problem) {
    assert_eq!(
        reply.status,
        problem.status().as_u16(),
        "status of {reply:?}"
    );
    assert_eq!(
        reply.header("content-type"),
        Some("application/problem+json"),
        "{reply:?}"
    );
    let type_field = format!("\"type\":\"{}\"", problem.type_uri());
    assert!(
        reply.body.contains(&type_field),
        "expected {type_field} in {}",
        reply.body
    );
}

/// `reply` is a replay of `first`: the same status and body, marked `Idempotent-Replayed`.
#[track_caller]
fn assert_replay_of(reply: &LoopbackReply, first: &LoopbackReply) {
    assert_eq!(
        (reply.status, reply.body.as_str(), reply.replayed()),
        (first.status, first.body.as_str(), true),
        "(status, body, replayed)"
    );
}

#[track_caller]
fn assert_counts(rig: &Rig, charges: u64, attempts: u64) {
    assert_eq!(
        (rig.shop.charges(), rig.shop.attempts()),
        (charges, attempts),
        "(charges, handler attempts)"
    );
}

/// 20 concurrent requests with one key, all looking before any reserves: one charge, one original, 19 replays.
pub fn concurrent_duplicates_run_the_handler_once(subject: &LayerUnderTest) {
    run(async {
        let racers = 20;
        let rig = Rig::start(
            subject,
            Setup {
                racers,
                ..Setup::default()
            },
        )
        .await;
        let tasks: Vec<_> = (0..racers)
            .map(|_| spawn_post(&rig, key("k-race"), PAY))
            .collect();
        let mut replies = Vec::new();
        for task in tasks {
            replies.push(within("a racer", task).await.unwrap().expect("a reply"));
        }
        assert_counts(&rig, 1, 1);
        assert!(
            replies
                .iter()
                .all(|r| r.status == 201 && r.body == r#"{"charge":1}"#),
            "{replies:?}"
        );
        assert_eq!(
            replies.iter().filter(|r| !r.replayed()).count(),
            1,
            "exactly one original"
        );
    });
}

/// Duplicates arriving while the first runs wait for it and receive its answer.
pub fn duplicates_wait_for_the_first_and_get_its_answer(subject: &LayerUnderTest) {
    run(async {
        let rig = Rig::start(subject, Setup::default()).await;
        let headers = [("idempotency-key", "k-wait"), ("x-gate", "1")];
        let first = spawn_post(&rig, headers, PAY);
        within("the first attempt to start", rig.shop.started(1)).await;
        let duplicates: Vec<_> = (0..4).map(|_| spawn_post(&rig, headers, PAY)).collect();
        within(
            "four duplicates to find the key in flight",
            rig.probe.in_flight_seen(4),
        )
        .await;
        rig.shop.open_gate();
        let first = within("the first", first).await.unwrap().unwrap();
        assert_eq!((first.status, first.replayed()), (201, false));
        for duplicate in duplicates {
            let reply = within("a duplicate", duplicate).await.unwrap().unwrap();
            assert_replay_of(&reply, &first);
        }
        assert_counts(&rig, 1, 1);
    });
}

/// The same key with a different body gets 422, and the 422 is not stored.
pub fn changed_body_under_a_used_key_is_422(subject: &LayerUnderTest) {
    run(async {
        let rig = Rig::start(subject, Setup::default()).await;
        let first = post(&rig, &key("k-body"), PAY).await;
        assert_eq!(first.status, 201);
        let changed = post(&rig, &key("k-body"), r#"{"amount":999}"#).await;
        assert_problem(&changed, Problem::KeyReused);
        assert_counts(&rig, 1, 1);
        let again = post(&rig, &key("k-body"), PAY).await;
        assert_replay_of(&again, &first);
        assert_counts(&rig, 1, 1);
    });
}

/// A different body under a key whose first request is still running gets 422 at once.
pub fn changed_body_while_the_first_runs_is_422(subject: &LayerUnderTest) {
    run(async {
        let setup = Setup {
            // A layer that wrongly waits instead of answering 422 gives up after a second.
            options: |builder| builder.in_flight(InFlight::Wait(Duration::from_secs(1))),
            ..Setup::default()
        };
        let rig = Rig::start(subject, setup).await;
        let first = spawn_post(&rig, [("idempotency-key", "k-live"), ("x-gate", "1")], PAY);
        within("the first attempt to start", rig.shop.started(1)).await;
        let changed = post(&rig, &key("k-live"), r#"{"amount":999}"#).await;
        assert_problem(&changed, Problem::KeyReused);
        rig.shop.open_gate();
        let first = within("the first", first).await.unwrap().unwrap();
        assert_eq!((first.status, first.replayed()), (201, false));
        assert_counts(&rig, 1, 1);
    });
}

/// A JSON body's fingerprint ignores key order and whitespace: the retry is a replay.
pub fn json_key_order_and_whitespace_do_not_matter(subject: &LayerUnderTest) {
    run(async {
        let rig = Rig::start(subject, Setup::default()).await;
        let first = post(&rig, &key("k-json"), r#"{"amount":5,"note":"rent"}"#).await;
        let retry = post(
            &rig,
            &key("k-json"),
            "{ \"note\": \"rent\",\n  \"amount\": 5 }",
        )
        .await;
        assert_eq!(first.status, 201);
        assert_replay_of(&retry, &first);
        assert_counts(&rig, 1, 1);
    });
}

/// GET is outside the layer's methods: with a key it runs every time and is never stored.
pub fn get_with_a_key_is_never_stored(subject: &LayerUnderTest) {
    run(async {
        let rig = Rig::start(subject, Setup::default()).await;
        for _ in 0..3 {
            let reply = within("a GET", rig.client.get("/pay", &key("k-get")))
                .await
                .unwrap();
            assert_eq!((reply.status, reply.replayed()), (200, false));
        }
        assert_counts(&rig, 0, 3);
        let post = post(&rig, &key("k-get"), PAY).await; // the key was never taken by the GETs
        assert_eq!((post.status, post.replayed()), (201, false));
        assert_counts(&rig, 1, 4);
    });
}

/// Without a key (and no policy requiring one) a POST passes through, unprotected.
pub fn keyless_posts_pass_through(subject: &LayerUnderTest) {
    run(async {
        let rig = Rig::start(subject, Setup::default()).await;
        let a = post(&rig, &[], PAY).await;
        let b = post(&rig, &[], PAY).await;
        assert_eq!((a.status, b.status, b.replayed()), (201, 201, false));
        assert_counts(&rig, 2, 2);
    });
}

/// Where the policy requires a key, a keyless POST gets 400 and the handler does not run.
pub fn required_key_missing_is_400(subject: &LayerUnderTest) {
    run(async {
        let setup = Setup {
            options: |builder| builder.require_key(|parts| parts.uri.path() == "/pay"),
            ..Setup::default()
        };
        let rig = Rig::start(subject, setup).await;
        assert_problem(&post(&rig, &[], PAY).await, Problem::KeyMissing);
        assert_counts(&rig, 0, 0);
        assert_eq!(post(&rig, &key("k-req"), PAY).await.status, 201);
        assert_counts(&rig, 1, 1);
    });
}

/// The structured-field form `"abc"` and the bare token `abc` name the same key.
pub fn quoted_and_bare_keys_are_the_same_key(subject: &LayerUnderTest) {
    run(async {
        let rig = Rig::start(subject, Setup::default()).await;
        let quoted = post(&rig, &key("\"k-form\""), PAY).await;
        let bare = post(&rig, &key("k-form"), PAY).await;
        assert_eq!(
            (quoted.status, bare.status, bare.replayed()),
            (201, 201, true)
        );
        assert_counts(&rig, 1, 1);
    });
}

/// Empty, malformed, over-long and repeated key headers get 400 and change nothing.
pub fn invalid_keys_are_400_and_change_nothing(subject: &LayerUnderTest) {
    run(async {
        let rig = Rig::start(subject, Setup::default()).await;
        let too_long = "k".repeat(MAX_KEY_CHARS + 1);
        for bad in [
            "",
            "\"\"",
            "\"unclosed",
            "a,b",
            "with space",
            too_long.as_str(),
        ] {
            let reply = post(&rig, &key(bad), PAY).await;
            assert_problem(&reply, Problem::KeyInvalid);
        }
        let (status, body) = rig
            .raw(&format!(
                "POST /pay HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\n\
                 idempotency-key: one\r\nidempotency-key: two\r\ncontent-length: {}\r\n\r\n{PAY}",
                PAY.len()
            ))
            .await;
        assert_eq!(status, 400, "two key lines: {body}");
        assert!(body.contains(&Problem::KeyInvalid.type_uri()), "{body}");
        assert_counts(&rig, 0, 0);
        let longest = "k".repeat(MAX_KEY_CHARS);
        assert_eq!(post(&rig, &key(&longest), PAY).await.status, 201);
        assert_counts(&rig, 1, 1);
    });
}

/// A body over the limit gets 413 before the handler runs, and the key stays free.
pub fn oversized_body_is_413_before_the_handler(subject: &LayerUnderTest) {
    run(async {
        let setup = Setup {
            options: |builder| builder.max_body_bytes(1024),
            ..Setup::default()
        };
        let rig = Rig::start(subject, setup).await;
        let big = format!("{{\"amount\":5,\"pad\":\"{}\"}}", "p".repeat(2000));
        assert_problem(
            &post(&rig, &key("k-big"), &big).await,
            Problem::BodyTooLarge,
        );
        assert_counts(&rig, 0, 0);
        let fitting = post(&rig, &key("k-big"), PAY).await;
        assert_eq!((fitting.status, fitting.replayed()), (201, false));
        assert_counts(&rig, 1, 1);
    });
}

/// A replay carries the stored status, body, Content-Type and Location, never Set-Cookie.
pub fn replay_keeps_status_headers_and_body_but_not_cookies(subject: &LayerUnderTest) {
    run(async {
        let rig = Rig::start(subject, Setup::default()).await;
        let first = post(&rig, &key("k-hdr"), PAY).await;
        assert!(first.header("set-cookie").is_some());
        let replay = post(&rig, &key("k-hdr"), PAY).await;
        assert_eq!(
            (replay.status, replay.body.as_str()),
            (201, first.body.as_str())
        );
        assert_eq!(replay.header("idempotent-replayed"), Some("true"));
        assert_eq!(replay.header("location"), first.header("location"));
        assert_eq!(replay.header("content-type"), Some("application/json"));
        assert_eq!(replay.header("set-cookie"), None);
        assert!(!first.replayed());
        assert_counts(&rig, 1, 1);
    });
}

/// A 5xx is not stored: the key is released and the retry runs afresh, then is replayed.
pub fn server_error_releases_the_key(subject: &LayerUnderTest) {
    run(async {
        let rig = Rig::start(subject, Setup::default()).await;
        let headers = [("idempotency-key", "k-500"), ("x-flaky", "t")];
        let first = post(&rig, &headers, PAY).await;
        assert_eq!(first.status, 500);
        assert_counts(&rig, 0, 1);
        let retry = post(&rig, &headers, PAY).await;
        assert_eq!((retry.status, retry.replayed()), (201, false), "{retry:?}");
        assert_counts(&rig, 1, 2);
        let again = post(&rig, &headers, PAY).await;
        assert_eq!((again.status, again.replayed()), (201, true));
        assert_counts(&rig, 1, 2);
    });
}

/// Duplicates waiting on a first attempt that fails get 503 with Retry-After: 1, not the 500.
pub fn waiters_get_503_when_the_first_attempt_fails(subject: &LayerUnderTest) {
    run(async {
        let rig = Rig::start(subject, Setup::default()).await;
        let headers = [
            ("idempotency-key", "k-fail"),
            ("x-flaky", "t"),
            ("x-gate", "1"),
        ];
        let first = spawn_post(&rig, headers, PAY);
        within("the first attempt to start", rig.shop.started(1)).await;
        let waiters: Vec<_> = (0..3).map(|_| spawn_post(&rig, headers, PAY)).collect();
        within("three waiters", rig.probe.in_flight_seen(3)).await;
        rig.shop.open_gate();
        assert_eq!(
            within("the first", first).await.unwrap().unwrap().status,
            500
        );
        for waiter in waiters {
            let reply = within("a waiter", waiter).await.unwrap().unwrap();
            assert_problem(&reply, Problem::FirstAttemptFailed);
            assert_eq!(reply.header("retry-after"), Some("1"));
        }
        assert_counts(&rig, 0, 1);
        let retry = post(&rig, &headers, PAY).await;
        assert_eq!((retry.status, retry.replayed()), (201, false));
        assert_counts(&rig, 1, 2);
    });
}

/// A duplicate that waits past the deadline gets 503 with Retry-After; the first still charges once.
pub fn wait_deadline_answers_503_with_retry_after(subject: &LayerUnderTest) {
    run(async {
        let setup = Setup {
            options: |builder| builder.in_flight(InFlight::Wait(Duration::from_millis(100))),
            ..Setup::default()
        };
        let rig = Rig::start(subject, setup).await;
        let headers = [("idempotency-key", "k-slow"), ("x-gate", "1")];
        let first = spawn_post(&rig, headers, PAY);
        within("the first attempt to start", rig.shop.started(1)).await;
        let late = post(&rig, &headers, PAY).await;
        assert_problem(&late, Problem::WaitTimedOut);
        assert_eq!(late.header("retry-after"), Some("1"));
        rig.shop.open_gate();
        assert_eq!(
            within("the first", first).await.unwrap().unwrap().status,
            201
        );
        let retry = post(&rig, &headers, PAY).await;
        assert_eq!((retry.status, retry.replayed()), (201, true));
        assert_counts(&rig, 1, 1);
    });
}

/// With the reject policy a duplicate of a running request gets 409 at once.
pub fn reject_policy_answers_409_at_once(subject: &LayerUnderTest) {
    run(async {
        let setup = Setup {
            options: |builder| builder.in_flight(InFlight::Reject),
            ..Setup::default()
        };
        let rig = Rig::start(subject, setup).await;
        let headers = [("idempotency-key", "k-409"), ("x-gate", "1")];
        let first = spawn_post(&rig, headers, PAY);
        within("the first attempt to start", rig.shop.started(1)).await;
        assert_problem(&post(&rig, &headers, PAY).await, Problem::InProgress);
        rig.shop.open_gate();
        assert_eq!(
            within("the first", first).await.unwrap().unwrap().status,
            201
        );
        assert_counts(&rig, 1, 1);
    });
}

/// Keys belong to a caller: the same key from alice, bob and anonymous is three payments.
pub fn callers_never_share_keys(subject: &LayerUnderTest) {
    run(async {
        let rig = Rig::start(subject, Setup::default()).await;
        let alice = [
            ("idempotency-key", "k-1"),
            ("authorization", "Bearer alice"),
        ];
        let bob = [("idempotency-key", "k-1"), ("authorization", "Bearer bob")];
        let a = post(&rig, &alice, PAY).await;
        let b = post(&rig, &bob, PAY).await;
        let anonymous = post(&rig, &key("k-1"), PAY).await;
        assert!(!a.replayed() && !b.replayed() && !anonymous.replayed());
        assert_counts(&rig, 3, 3);
        let a_again = post(&rig, &alice, PAY).await;
        let b_again = post(&rig, &bob, PAY).await;
        assert_eq!(
            (a_again.body.as_str(), a_again.replayed()),
            (a.body.as_str(), true)
        );
        assert_eq!(
            (b_again.body.as_str(), b_again.replayed()),
            (b.body.as_str(), true)
        );
        assert_ne!(a.body, b.body);
        assert_counts(&rig, 3, 3);
    });
}

/// A first request whose client disconnects still finishes and is stored; the retry replays it.
/// The charge, made after the client left, still runs under the key's reservation.
pub fn disconnected_first_request_still_completes(subject: &LayerUnderTest) {
    run(async {
        let setup = Setup {
            // Short, so a variant that leaves the key locked fails in seconds, not minutes.
            options: |builder| builder.in_flight(InFlight::Wait(Duration::from_secs(2))),
            ..Setup::default()
        };
        let rig = Rig::start(subject, setup).await;
        let stream = rig
            .open(&format!(
                "POST /pay HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nx-gate: 1\r\n\
                 idempotency-key: k-gone\r\ncontent-length: {}\r\n\r\n{PAY}",
                PAY.len()
            ))
            .await;
        within("the first attempt to start", rig.shop.started(1)).await;
        rig.leave(stream).await; // the client gives up
        rig.shop.open_gate();
        // The first request now either runs on and its answer is stored, or went away with its
        // client: the retry comes after whichever happened, not a guess at how long it takes.
        within("the first request to be stored or dropped", async {
            tokio::select! {
                () = rig.probe.completed(1) => {}
                () = rig.shop.cancelled(1) => {}
            }
        })
        .await;
        let retry = post(&rig, &key("k-gone"), PAY).await;
        assert_eq!((retry.status, retry.replayed()), (201, true), "{retry:?}");
        assert_counts(&rig, 1, 1);
        let granted: Vec<_> = rig.probe.granted().into_iter().map(Some).collect();
        assert_eq!(
            (rig.shop.reservations(), granted.len()),
            (granted, 1),
            "the reservation the charge ran under, after its client left"
        );
    });
}

/// A client that leaves while its key is being reserved strands nothing: the reservation and
/// the attempt after it finish without the client, and the retry replays the stored answer.
pub fn leaving_during_the_reservation_strands_no_key(subject: &LayerUnderTest) {
    run(async {
        let setup = Setup {
            // Short, so a variant that strands the key fails in seconds, not minutes.
            options: |builder| builder.in_flight(InFlight::Wait(Duration::from_secs(2))),
            hold_reservations: true,
            ..Setup::default()
        };
        let rig = Rig::start(subject, setup).await;
        let stream = rig
            .open(&format!(
                "POST /pay HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
                 idempotency-key: k-stranded\r\ncontent-length: {}\r\n\r\n{PAY}",
                PAY.len()
            ))
            .await;
        // The store has reserved the key; its answer has not reached the layer yet.
        within(
            "the store to reserve the key",
            rig.probe.granted_at_least(1),
        )
        .await;
        rig.leave(stream).await; // the client gives up
        rig.probe.let_reservations_through();
        within_for(
            Duration::from_secs(5),
            "the first attempt to be stored",
            rig.probe.completed(1),
        )
        .await;
        let retry = post(&rig, &key("k-stranded"), PAY).await;
        assert_eq!((retry.status, retry.replayed()), (201, true), "{retry:?}");
        assert_eq!(
            rig.probe.granted().len(),
            1,
            "one reservation, never a second"
        );
        assert_counts(&rig, 1, 1);
    });
}

/// A duplicate whose client leaves while it waits is simply dropped; the first still counts once.
pub fn waiting_client_that_leaves_changes_nothing(subject: &LayerUnderTest) {
    run(async {
        let rig = Rig::start(subject, Setup::default()).await;
        let headers = [("idempotency-key", "k-leave"), ("x-gate", "1")];
        let first = spawn_post(&rig, headers, PAY);
        within("the first attempt to start", rig.shop.started(1)).await;
        let waiter = rig
            .open(&format!(
                "POST /pay HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
                 idempotency-key: k-leave\r\ncontent-length: {}\r\n\r\n{PAY}",
                PAY.len()
            ))
            .await;
        within("the duplicate to wait", rig.probe.in_flight_seen(1)).await;
        rig.leave(waiter).await; // this client gives up while waiting
        rig.shop.open_gate();
        let first = within("the first", first).await.unwrap().unwrap();
        assert_eq!((first.status, first.replayed()), (201, false));
        let retry = post(&rig, &key("k-leave"), PAY).await;
        assert_replay_of(&retry, &first);
        assert_counts(&rig, 1, 1);
    });
}

/// A panicking handler answers 500 and releases the key; the retry runs afresh.
pub fn panicking_handler_releases_the_key(subject: &LayerUnderTest) {
    run(async {
        let rig = Rig::start(subject, Setup::default()).await;
        let headers = [("idempotency-key", "k-panic"), ("x-panic", "t")];
        assert_problem(&post(&rig, &headers, PAY).await, Problem::HandlerFailed);
        assert_counts(&rig, 0, 1);
        let retry = post(&rig, &headers, PAY).await;
        assert_eq!((retry.status, retry.replayed()), (201, false), "{retry:?}");
        assert_counts(&rig, 1, 2);
    });
}

/// A full store refuses new keys with 503 and keeps every live record (a retry still replays).
pub fn full_store_refuses_new_keys_and_keeps_live_records(subject: &LayerUnderTest) {
    run(async {
        let limits = StoreLimits {
            max_entries: 1,
            ..StoreLimits::default()
        };
        let rig = Rig::start(
            subject,
            Setup {
                limits,
                ..Setup::default()
            },
        )
        .await;
        let first = post(&rig, &key("k-a"), PAY).await;
        assert_eq!(first.status, 201);
        let refused = post(&rig, &key("k-b"), PAY).await;
        assert_problem(&refused, Problem::StoreFull);
        assert_eq!(refused.header("retry-after"), Some("1"));
        assert_counts(&rig, 1, 1);
        let retry = post(&rig, &key("k-a"), PAY).await;
        assert_replay_of(&retry, &first);
        assert_counts(&rig, 1, 1);
    });
}

/// Records past their retention are swept: they free room, and their key runs afresh.
pub fn expired_records_are_swept_and_run_afresh(subject: &LayerUnderTest) {
    run(async {
        let limits = StoreLimits {
            max_entries: 1,
            retention: Duration::ZERO,
            ..StoreLimits::default()
        };
        let rig = Rig::start(
            subject,
            Setup {
                limits,
                ..Setup::default()
            },
        )
        .await;
        assert_eq!(post(&rig, &key("k-old"), PAY).await.status, 201);
        let other = post(&rig, &key("k-new"), PAY).await; // room was made by the sweep
        assert_eq!((other.status, other.replayed()), (201, false));
        let again = post(&rig, &key("k-old"), PAY).await;
        assert_eq!((again.status, again.replayed()), (201, false));
        assert_counts(&rig, 3, 3);
    });
}

/// A response over the storage limit is replayed as its status, Location and a problem body.
pub fn large_response_replays_status_and_location_only(subject: &LayerUnderTest) {
    run(async {
        let setup = Setup {
            options: |builder| builder.max_stored_body_bytes(1024),
            ..Setup::default()
        };
        let rig = Rig::start(subject, setup).await;
        let headers = [("idempotency-key", "k-large"), ("x-big", "100000")];
        let first = post(&rig, &headers, PAY).await;
        assert_eq!((first.status, first.body.len()), (201, 100_000));
        let replay = post(&rig, &headers, PAY).await;
        assert_eq!(replay.status, 201);
        assert!(replay.replayed());
        assert_eq!(replay.header("location"), first.header("location"));
        assert!(
            replay.body.contains(&Problem::ResponseNotStored.type_uri()),
            "{}",
            replay.body
        );
        assert_counts(&rig, 1, 1);
    });
}

/// A first attempt whose body breaks after a 201 keeps a status-only record: the retry replays
/// the 201 and its Location and never charges again.
pub fn broken_response_body_keeps_a_summary_record(subject: &LayerUnderTest) {
    run(async {
        let rig = Rig::start(subject, Setup::default()).await;
        let headers = [("idempotency-key", "k-broken"), ("x-break", "1")];
        let first = post(&rig, &headers, PAY).await;
        // The charge happened, but this client cannot be given the body it was promised.
        assert_problem(&first, Problem::HandlerFailed);
        assert_counts(&rig, 1, 1);
        let retry = post(&rig, &headers, PAY).await;
        assert_eq!((retry.status, retry.replayed()), (201, true), "{retry:?}");
        assert_eq!(retry.header("location"), Some("/charges/1"));
        assert!(
            retry.body.contains(&Problem::ResponseNotStored.type_uri()),
            "{}",
            retry.body
        );
        assert_counts(&rig, 1, 1);
    });
}

/// If the store fails, keyed requests get 503 and the handler never runs (fail closed).
pub fn failing_store_refuses_before_any_work(subject: &LayerUnderTest) {
    run(async {
        let rig = Rig::start(
            subject,
            Setup {
                broken_store: true,
                ..Setup::default()
            },
        )
        .await;
        let reply = post(&rig, &key("k-down"), PAY).await;
        assert_problem(&reply, Problem::StoreUnavailable);
        assert_counts(&rig, 0, 0);
        assert_eq!(post(&rig, &[], PAY).await.status, 201); // keyless traffic is not affected
        assert_counts(&rig, 1, 1);
    });
}

/// The first attempt runs under the reservation the store granted (its entry and token, read
/// with `Reservation::current()`), so a handler that shares the store's database can fence its
/// write with it; a keyless request carries none. Without it stage 6's fence has nothing to check.
pub fn first_attempt_carries_its_reservation(subject: &LayerUnderTest) {
    run(async {
        let rig = Rig::start(subject, Setup::default()).await;
        let first = post(&rig, &key("k-fence"), PAY).await;
        assert_eq!(first.status, 201, "the first attempt: {first:?}");
        let granted = rig.probe.granted();
        assert_eq!(
            granted.len(),
            1,
            "reservations the store granted: {granted:?}"
        );
        assert_eq!(
            rig.shop.reservations(),
            vec![Some(granted[0])],
            "the reservation the handler ran under on the first attempt"
        );
        let keyless = post(&rig, &[], PAY).await;
        assert_eq!(keyless.status, 201, "a keyless POST: {keyless:?}");
        assert_eq!(
            rig.shop.reservations().last(),
            Some(&None),
            "a keyless request carries no reservation"
        );
    });
}
