//! The HTTP crash matrix: a real `payments` process is stopped at each of four points of a
//! keyed payment and killed there with SIGKILL; a new process on the same database gets the
//! same key. Every row must end with exactly one charge, the first retry must get the
//! definitive answer, and every answer must name the same payment.
//!
//! The PostgreSQL rows are ignored, not passed, without RETRYKEY_PG_URL.

use std::time::Duration;

use crate::support::{DbFile, PgSchema, Replica};
use retrykey_replicas::crash::Point;

const PAY: &str = r#"{"amount":5}"#;

/// Kills a replica at `point` while it serves `crash-<point>`, then retries on a fresh replica of
/// the same `store` until the payment is answered; checks the charges and the answers.
async fn crash_at(point: Point, store: &[String]) {
    let key = format!("crash-{point}");
    let args = |extra: &[&str]| -> Vec<String> {
        let fixed = ["--lease", "1s", "--work-ms", "0"];
        let fixed = fixed.iter().chain(extra).map(|arg| (*arg).to_owned());
        store.iter().cloned().chain(fixed).collect()
    };

    // First life: the request stops at the point, and the process dies there.
    let first = Replica::start(&args(&["--pause-at", point.name()]));
    let client = first.client.clone();
    let key_for_request = key.clone();
    let lost = tokio::spawn(async move {
        client
            .post("/payments", &[("idempotency-key", &key_for_request)], PAY)
            .await
    });
    first.wait_for_line(&format!("paused at {point}"), Duration::from_secs(60));
    first.kill();
    assert!(
        lost.await.expect("the request task").is_err(),
        "the client of a killed replica gets no answer"
    );

    // Second life on the same database: one retry of the same key gets the definitive answer.
    // While the killed owner's lease runs the retry waits; once it lapses the retry takes the
    // key over and runs the payment itself, in the same request.
    let second = Replica::start(&args(&[]));
    let answer = second.pay(&key, PAY).await;
    assert_eq!(
        answer.status, 201,
        "the first retry after a crash at {point}: {answer:?}"
    );
    let again = second.pay(&key, PAY).await;

    assert_eq!(
        second.charges().await,
        1,
        "charges after a crash at {point}"
    );
    // PostgreSQL may skip a payment number that a rolled-back charge drew from its sequence, so
    // the number itself is not fixed; that every answer names the same one is.
    assert!(
        answer.body.starts_with(r#"{"payment":"#),
        "the answer after a crash at {point}: {}",
        answer.body
    );
    assert_eq!(
        (again.status, again.body.as_str(), again.replayed()),
        (201, answer.body.as_str(), true),
        "a later retry replays the same payment"
    );
    // Only a crash after the commit leaves an answer to replay straight away.
    assert_eq!(
        answer.replayed(),
        point == Point::Committed,
        "whether the first answer after a crash at {point} is a replay"
    );
}

macro_rules! crash_matrix {
    ($($sqlite:ident, $pg:ident => $point:expr;)*) => {
        $(
            // A crash at this point leaves one charge, and every answer names it.
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $sqlite() {
                let file = DbFile::new("crash");
                crash_at($point, &file.args()).await;
            }

            // The same on PostgreSQL, in a schema of its own.
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            #[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
            async fn $pg() {
                let schema = PgSchema::new(stringify!($sqlite)).await;
                crash_at($point, &schema.args()).await;
            }
        )*
    };
}

crash_matrix! {
    sqlite_after_reserve, postgres_after_reserve => Point::Reserved;
    sqlite_inside_the_handler, postgres_inside_the_handler => Point::Handler;
    sqlite_after_the_charge_before_the_answer, postgres_after_the_charge_before_the_answer => Point::Charged;
    sqlite_after_commit_before_the_reply, postgres_after_commit_before_the_reply => Point::Committed;
}
