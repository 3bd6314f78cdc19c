//! SIGTERM stops the `payments` server gracefully: a running payment finishes and is answered,
//! and the process exits 0. A payment still running at the shutdown deadline is cut off, the
//! exit status says so, and with a database store its key is left unfinished, so that the
//! client's retry runs it (once) instead of replaying an answer nobody got.

mod support;

use std::time::Duration;

use support::{DbFile, PgSchema, Replica};

// SIGTERM during a two-second keyed payment: the client gets its 201, one charge is counted,
// and the server exits 0 once the reply is out.
#[tokio::test]
async fn sigterm_lets_a_running_payment_finish_then_exits_0() {
    let server = Replica::start(&["--work-ms", "0"]);
    let client = server.client.clone();
    let running = tokio::spawn(async move {
        client
            .post(
                "/payments",
                &[("idempotency-key", "long"), ("x-delay-ms", "2000")],
                r#"{"amount":5}"#,
            )
            .await
    });
    server.handler_entered(1).await;
    let addr = server.addr().to_owned();
    let stopping = tokio::task::spawn_blocking(move || server.terminate(Duration::from_secs(30)));

    let reply = running
        .await
        .unwrap()
        .expect("an answer, not a cut connection");
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_eq!(reply.body, r#"{"payment":1}"#);
    let (code, lines) = stopping.await.unwrap();
    assert_eq!(code, Some(0), "{lines:?}");
    assert_eq!(lines, ["stopped: charges=1 attempts=1"]);
    assert!(
        tokio::net::TcpStream::connect(&addr).await.is_err(),
        "the listener is closed"
    );
}

/// Starts a payment that runs for 20 s on `store_args`, sends SIGTERM with a 500 ms deadline,
/// and checks that the payment was cut off: no answer, exit status 1, nothing charged. Then a
/// new server on the same database takes the key over once its lease has run out and charges it
/// as a first attempt. Returns the charges the new server reports.
async fn cut_off_then_retried(store_args: &[String]) -> u64 {
    let mut args: Vec<String> = store_args.to_vec();
    args.extend(
        [
            "--lease",
            "1s",
            "--shutdown-deadline",
            "500ms",
            "--work-ms",
            "0",
        ]
        .map(str::to_owned),
    );
    let server = Replica::start(&args);
    let client = server.client.clone();
    let running = tokio::spawn(async move {
        client
            .post(
                "/payments",
                &[("idempotency-key", "cut"), ("x-delay-ms", "20000")],
                r#"{"amount":5}"#,
            )
            .await
    });
    server.handler_entered(1).await;
    let (code, lines) =
        tokio::task::spawn_blocking(move || server.terminate(Duration::from_secs(30)))
            .await
            .unwrap();
    assert_eq!(
        code,
        Some(1),
        "a cut-off request is not a clean stop: {lines:?}"
    );
    assert_eq!(lines, ["stopped: charges=0 attempts=1"]);
    assert!(
        running.await.unwrap().is_err(),
        "the cut-off client got no answer"
    );

    let next = Replica::start(&args);
    // Past the cut-off attempt's lease, the key is free to take over.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let retry = next
        .client
        .post(
            "/payments",
            &[("idempotency-key", "cut")],
            r#"{"amount":5}"#,
        )
        .await
        .expect("an answer");
    assert_eq!(retry.status, 201, "{}", retry.body);
    assert!(!retry.replayed(), "the key was not left looking finished");
    next.charges().await
}

// SQLite: the payment cut off at the deadline leaves its key unfinished and charges nothing;
// the retry on a new server charges once.
#[tokio::test]
async fn past_the_deadline_a_payment_is_cut_off_and_its_key_left_unfinished_sqlite() {
    let db = DbFile::new("cut-off");
    assert_eq!(cut_off_then_retried(&db.args()).await, 1);
}

// The same on PostgreSQL, where the charge count is also read from the table itself.
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
#[tokio::test]
async fn past_the_deadline_a_payment_is_cut_off_and_its_key_left_unfinished_postgres() {
    let schema = PgSchema::new("cut_off").await;
    assert_eq!(cut_off_then_retried(&schema.args()).await, 1);
    assert_eq!(schema.charges().await, 1);
}
