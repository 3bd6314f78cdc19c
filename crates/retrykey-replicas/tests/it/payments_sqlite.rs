//! The payments server on a SQLite file, as a client sees it across a crash and at its limits.

use crate::support::{DbFile, Replica};

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
    assert!(third.body.contains("problem:store-full"), "{}", third.body);
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
