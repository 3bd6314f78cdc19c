//! The payments server on a SQLite file, as a client sees it across a crash and at its limits.

mod support;

use support::{DbFile, Replica};

// A charge survives SIGKILL: a retry to a new process on the same file replays it, uncharged.
#[tokio::test]
async fn a_charge_survives_a_killed_server() {
    let file = DbFile::new("restart");
    let store = file.store();
    let first = Replica::start(&["--store", &store, "--work-ms", "0"]);
    let paid = first.pay("order-7", r#"{"amount":700}"#).await;
    assert_eq!(
        (paid.status, paid.body.as_str(), paid.replayed()),
        (201, r#"{"payment":1}"#, false)
    );
    first.kill();

    let second = Replica::start(&["--store", &store, "--work-ms", "0"]);
    let retry = second.pay("order-7", r#"{"amount":700}"#).await;
    assert_eq!(
        (retry.status, retry.body.as_str(), retry.replayed()),
        (201, r#"{"payment":1}"#, true)
    );
    assert_eq!(retry.header("location"), Some("/payments/1"));
    assert_eq!(second.charges().await, 1);
}

// With --max-entries 2, a third fresh key gets 503 store-full; the first two still replay.
#[tokio::test]
async fn max_entries_refuses_a_third_fresh_key() {
    let file = DbFile::new("full");
    let server = Replica::start(&[
        "--store",
        &file.store(),
        "--work-ms",
        "0",
        "--max-entries",
        "2",
    ]);
    for key in ["k-1", "k-2"] {
        assert_eq!(
            server.pay(key, r#"{"amount":1}"#).await.status,
            201,
            "{key}"
        );
    }
    let third = server.pay("k-3", r#"{"amount":1}"#).await;
    assert_eq!(third.status, 503);
    assert_eq!(
        third.header("content-type"),
        Some("application/problem+json")
    );
    assert!(
        third.body.contains("/problems/store-full"),
        "{}",
        third.body
    );
    for (key, payment) in [("k-1", r#"{"payment":1}"#), ("k-2", r#"{"payment":2}"#)] {
        let replay = server.pay(key, r#"{"amount":1}"#).await;
        assert_eq!(
            (replay.status, replay.body.as_str(), replay.replayed()),
            (201, payment, true),
            "{key}"
        );
    }
    assert_eq!(server.charges().await, 2);
}

/// Starts a payment for `key` on a server started with `--pause-at <point>`, waits until the
/// server prints `paused at <point>`, and returns the request still waiting for its answer.
async fn pay_until_paused(
    server: &mut Replica,
    key: &'static str,
    point: &str,
) -> tokio::task::JoinHandle<()> {
    let client = server.client.clone();
    let request = tokio::spawn(async move {
        // Its answer never comes: the server is killed while the request is paused.
        let _ = client
            .post("/payments", &[("idempotency-key", key)], r#"{"amount":3}"#)
            .await;
    });
    let stdout = &mut server.stdout;
    let line = tokio::task::block_in_place(|| {
        let mut line = String::new();
        std::io::BufRead::read_line(stdout, &mut line).map(|_| line)
    })
    .expect("the server reports the pause");
    assert_eq!(line.trim(), format!("paused at {point}"));
    request
}

// Killed at `charged` (the charge written, nothing committed): the restarted server charges
// the retry as new, once the dead owner's lease has lapsed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_before_the_commit_the_retry_charges_once() {
    let file = DbFile::new("pause-charged");
    let store = file.store();
    let mut first = Replica::start(&[
        "--store",
        &store,
        "--work-ms",
        "0",
        "--lease",
        "300ms",
        "--pause-at",
        "charged",
    ]);
    let request = pay_until_paused(&mut first, "p-charged", "charged").await;
    // The rest of the server still answers while that request is stopped.
    assert_eq!(first.charges().await, 0);
    first.kill();
    request.abort();

    tokio::time::sleep(std::time::Duration::from_millis(400)).await; // the lease lapses
    let second = Replica::start(&["--store", &store, "--work-ms", "0"]);
    let retry = second.pay("p-charged", r#"{"amount":3}"#).await;
    assert_eq!(
        (retry.status, retry.body.as_str(), retry.replayed()),
        (201, r#"{"payment":1}"#, false)
    );
    assert_eq!(second.charges().await, 1);
}

// Killed at `committed` (charge and answer committed, the client unanswered): the retry to a
// restarted server replays the answer and charges nothing more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_after_the_commit_the_retry_replays() {
    let file = DbFile::new("pause-committed");
    let store = file.store();
    let mut first = Replica::start(&[
        "--store",
        &store,
        "--work-ms",
        "0",
        "--pause-at",
        "committed",
    ]);
    let request = pay_until_paused(&mut first, "p-committed", "committed").await;
    assert_eq!(first.charges().await, 1);
    first.kill();
    request.abort();

    let second = Replica::start(&["--store", &store, "--work-ms", "0"]);
    let retry = second.pay("p-committed", r#"{"amount":3}"#).await;
    assert_eq!(
        (retry.status, retry.body.as_str(), retry.replayed()),
        (201, r#"{"payment":1}"#, true)
    );
    assert_eq!(second.charges().await, 1);
}
