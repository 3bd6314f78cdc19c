//! Which connections are reused and which are replaced: a broken or abandoned connection never
//! serves the next caller, an ordinary failure keeps its connection unless the settings say
//! otherwise.

use std::sync::Arc;
use std::time::Duration;

use retrykey_pg::Settings;
use tokio::sync::Notify;

use crate::{backend, block, pool, raise};

#[test]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
fn a_healthy_connection_is_reused() {
    let pool = pool(Settings::new(1));
    block(async {
        assert_eq!(backend(&pool).await, backend(&pool).await);
    });
}

#[test]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
fn a_connection_the_server_ended_is_replaced() {
    let pool = pool(Settings::new(1));
    block(async {
        let first = backend(&pool).await;
        let ended = pool
            .run(|connection| {
                Box::pin(async move {
                    connection
                        .batch("SELECT pg_terminate_backend(pg_backend_pid())")
                        .await
                })
            })
            .await
            .expect("a connection");
        assert!(ended.is_err(), "the server ends the connection");
        assert_ne!(backend(&pool).await, first);
    });
}

#[test]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
fn a_connection_left_inside_a_transaction_is_replaced() {
    let pool = pool(Settings::new(1));
    block(async {
        let first = backend(&pool).await;
        // The work opens a transaction and never returns: its future is dropped mid-way, once
        // the transaction is open (not after a guess at how long BEGIN takes).
        let begun = Arc::new(Notify::new());
        let signal = Arc::clone(&begun);
        let work = pool.run(move |connection| {
            let signal = Arc::clone(&signal);
            Box::pin(async move {
                connection.batch("BEGIN").await?;
                signal.notify_one();
                std::future::pending::<()>().await;
                Ok::<(), tokio_postgres::Error>(())
            })
        });
        let abandoned = tokio::time::timeout(Duration::from_secs(60), async {
            tokio::select! {
                _ = work => false,
                () = begun.notified() => true,
            }
        })
        .await;
        assert_eq!(
            abandoned,
            Ok(true),
            "the work was abandoned inside its transaction"
        );
        assert_ne!(backend(&pool).await, first);
    });
}

#[test]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
fn an_ordinary_failure_keeps_its_connection_unless_asked_to_close_it() {
    for (close_after_failure, replaced) in [(false, false), (true, true)] {
        let pool = pool(Settings {
            close_after_failure,
            ..Settings::new(1)
        });
        block(async {
            let first = backend(&pool).await;
            let sql = raise("unique_violation");
            let failed = pool
                .run(|connection| {
                    let sql = sql.clone();
                    Box::pin(async move { connection.batch(&sql).await })
                })
                .await
                .expect("a connection");
            assert!(failed.is_err());
            assert_eq!(backend(&pool).await != first, replaced);
        });
    }
}

#[test]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
fn connections_open_only_as_far_as_callers_overlap() {
    let pool = pool(Settings::new(4));
    block(async {
        // One caller at a time: always the first slot, so always one connection.
        let first = backend(&pool).await;
        for _ in 0..5 {
            assert_eq!(backend(&pool).await, first);
        }
    });
}

#[test]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
fn in_turn_every_slot_gets_its_connection() {
    let pool = pool(Settings {
        in_turn: true,
        ..Settings::new(3)
    });
    block(async {
        let mut seen = Vec::new();
        for _ in 0..6 {
            seen.push(backend(&pool).await);
        }
        assert_eq!(&seen[..3], &seen[3..], "the same three, in the same order");
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 3, "{seen:?}");
    });
}
