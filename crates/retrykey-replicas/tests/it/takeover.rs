//! Replicas that die or pause in the middle of a request, as real processes on one database.
//!
//! - A replica killed with SIGKILL mid-request leaves its key in flight; once the lease lapses,
//!   a retry on another replica takes the key over and charges once.
//! - A replica paused with SIGSTOP mid-request loses its key to another replica; resumed with
//!   SIGCONT, it carries on and tries to charge with its old token, and the database refuses.
//!
//! The PostgreSQL runs are ignored, not passed, without RETRYKEY_PG_URL.

use std::time::{Duration, Instant};

use crate::support::{DbFile, PgSchema, Replica};
use retrykey_server::loopback::LoopbackReply;

const PAY: &str = r#"{"amount":7}"#;

/// Both replicas of a test: a short lease so that a takeover comes quickly.
fn replica(store: &[String]) -> Replica {
    let fixed = ["--lease", "1s", "--work-ms", "0"].map(str::to_owned);
    Replica::start(&[store, &fixed[..]].concat())
}

/// Retries `key` on `server` until it is answered 201 (bounded), accepting only the 503s of a
/// key whose owner's lease has not lapsed yet.
async fn retry_until_paid(server: &Replica, key: &str) -> LoopbackReply {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let reply = server.pay(key, PAY).await;
        if reply.status == 201 {
            return reply;
        }
        assert_eq!(
            reply.status, 503,
            "while the old owner's lease runs out: {reply:?}"
        );
        assert!(
            Instant::now() < deadline,
            "the key was never taken over: {reply:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn killed_owner(store: &[String]) {
    let (a, b) = (replica(store), replica(store));
    // A's handler works for 30 seconds before it charges, renewing its lease all along.
    let client = a.client.clone();
    let lost = tokio::spawn(async move {
        client
            .post(
                "/payments",
                &[("idempotency-key", "kill-1"), ("x-delay-ms", "30000")],
                PAY,
            )
            .await
    });
    a.handler_entered(1).await;
    a.kill();
    assert!(
        lost.await.unwrap().is_err(),
        "a killed replica answers nothing"
    );

    let answer = retry_until_paid(&b, "kill-1").await;
    let again = b.pay("kill-1", PAY).await;
    assert_eq!(
        (b.charges().await, answer.body.as_str()),
        (1, r#"{"payment":1}"#)
    );
    assert!(!answer.replayed(), "B ran the handler itself");
    assert_eq!(
        (again.body.as_str(), again.replayed()),
        (answer.body.as_str(), true)
    );
}

async fn paused_owner(store: &[String]) {
    let (a, b) = (replica(store), replica(store));
    // A's handler works for 3 seconds before it charges; A is stopped during that time.
    let client = a.client.clone();
    let first = tokio::spawn(async move {
        client
            .post(
                "/payments",
                &[("idempotency-key", "pause-1"), ("x-delay-ms", "3000")],
                PAY,
            )
            .await
    });
    a.handler_entered(1).await;
    a.pause();

    // B takes the lapsed key over and charges.
    let answer = retry_until_paid(&b, "pause-1").await;
    assert_eq!(
        (b.charges().await, answer.body.as_str()),
        (1, r#"{"payment":1}"#)
    );

    // A wakes inside its handler, past its delay, and tries to charge with its old token.
    a.resume();
    let woken = first.await.unwrap().expect("A answers once resumed");
    assert_eq!(woken.status, 503, "{woken:?}");
    assert!(woken.body.contains("problem:lease-lost"), "{}", woken.body);
    assert_eq!(
        b.charges().await,
        1,
        "the paused owner's charge was refused"
    );
    assert_eq!(
        a.counts().await,
        (1, 1),
        "A ran its handler once and charged nothing"
    );

    // A's client retries, on A itself: it gets B's payment.
    let retry = a.pay("pause-1", PAY).await;
    assert_eq!(
        (retry.status, retry.body.as_str(), retry.replayed()),
        (201, answer.body.as_str(), true)
    );
}

// A replica killed mid-request does not leave its key stuck: after the lease, another takes over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_killed_owner_is_taken_over_after_its_lease() {
    let file = DbFile::new("killed");
    killed_owner(&file.args()).await;
}

// The same on PostgreSQL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
async fn postgres_killed_owner_is_taken_over_after_its_lease() {
    killed_owner(&PgSchema::new("killed").await.args()).await;
}

// A paused owner that wakes after a takeover cannot charge: its token is stale.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_paused_owner_cannot_charge_after_takeover() {
    let file = DbFile::new("paused");
    paused_owner(&file.args()).await;
}

// The same on PostgreSQL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
async fn postgres_paused_owner_cannot_charge_after_takeover() {
    paused_owner(&PgSchema::new("paused").await.args()).await;
}
