//! The one retry policy: a serialization failure or a deadlock is tried MAX_ATTEMPTS times in
//! all, any other failure once.

use std::sync::atomic::{AtomicU32, Ordering};

use retrykey_pg::{MAX_ATTEMPTS, Settings};
use tokio_postgres::error::SqlState;

use crate::{block, pool, raise};

/// How many times work that always fails with `code` ran, and the code it ended with.
fn attempts_of(code: &str) -> (u32, Option<SqlState>) {
    let pool = pool(Settings::new(1));
    let runs = AtomicU32::new(0);
    let sql = raise(code);
    let outcome = block(pool.run(|connection| {
        runs.fetch_add(1, Ordering::Relaxed);
        let sql = sql.clone();
        Box::pin(async move { connection.batch(&sql).await })
    }))
    .expect("a connection");
    let code = outcome.expect_err("the work fails").code().cloned();
    (runs.into_inner(), code)
}

#[test]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
fn a_serialization_failure_is_tried_max_attempts_times() {
    assert_eq!(
        attempts_of("serialization_failure"),
        (MAX_ATTEMPTS, Some(SqlState::T_R_SERIALIZATION_FAILURE))
    );
}

#[test]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
fn a_deadlock_is_tried_max_attempts_times() {
    assert_eq!(
        attempts_of("deadlock_detected"),
        (MAX_ATTEMPTS, Some(SqlState::T_R_DEADLOCK_DETECTED))
    );
}

#[test]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
fn any_other_failure_is_returned_at_once() {
    assert_eq!(
        attempts_of("unique_violation"),
        (1, Some(SqlState::UNIQUE_VIOLATION))
    );
}

#[test]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
fn work_that_succeeds_on_a_later_attempt_returns_its_value() {
    let pool = pool(Settings::new(1));
    let runs = AtomicU32::new(0);
    let transient = raise("serialization_failure");
    let answer = block(pool.run(|connection| {
        let run = runs.fetch_add(1, Ordering::Relaxed) + 1;
        let transient = transient.clone();
        Box::pin(async move {
            if run < MAX_ATTEMPTS {
                connection.batch(&transient).await?;
            }
            Ok::<u32, tokio_postgres::Error>(run)
        })
    }));
    assert_eq!(answer.expect("a connection").ok(), Some(MAX_ATTEMPTS));
}
