//! What a caller chooses: the schema, the operation timeout; and what is refused before any
//! connection is made.

use std::time::Duration;

use retrykey_pg::{Error, Pool, Settings, config};

use crate::{backend, block, pool, url};

#[test]
fn a_schema_name_that_is_not_a_plain_identifier_is_refused() {
    for name in ["", "Ledger", "1st", "a-b", "a;drop", &"x".repeat(64)] {
        let refused = config("postgres://localhost/db", name, "retrykey-pg-tests");
        assert!(
            matches!(refused, Err(Error::Identifier(ref named)) if named == name),
            "{name:?}"
        );
    }
    assert!(config("postgres://localhost/db", "_ledger_2", "retrykey-pg-tests").is_ok());
}

#[test]
fn a_url_that_cannot_be_read_is_refused() {
    let refused = config("not a url", "public", "retrykey-pg-tests");
    assert!(matches!(refused, Err(Error::Url(_))), "{refused:?}");
}

#[test]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
fn work_past_the_operation_timeout_is_given_up_and_its_connection_closed() {
    let limit = Duration::from_millis(200);
    let pool = pool(Settings {
        operation_timeout: Some(limit),
        ..Settings::new(1)
    });
    block(async {
        let first = backend(&pool).await;
        let slow = pool
            .run(|connection| Box::pin(async move { connection.batch("SELECT pg_sleep(5)").await }))
            .await;
        assert!(
            matches!(slow, Err(Error::OperationTimeout(given)) if given == limit),
            "{slow:?}"
        );
        assert_ne!(backend(&pool).await, first);
    });
}

#[test]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
fn create_schema_creates_the_schema_of_the_search_path() {
    let schema = format!("rk_pg_test_{}", std::process::id());
    let pool = Pool::new(
        config(&url(), &schema, "retrykey-pg-tests").expect("a valid URL"),
        Settings::new(1),
    );
    block(async {
        // Twice: the second finds it there.
        for _ in 0..2 {
            pool.create_schema(&schema).await.expect("created");
        }
        let found = pool
            .run(|connection| {
                Box::pin(async move {
                    let row = connection.one("SELECT current_schema()", &[]).await?;
                    Ok::<Option<String>, tokio_postgres::Error>(row.get(0))
                })
            })
            .await
            .expect("a connection")
            .expect("an answer");
        assert_eq!(found.as_deref(), Some(schema.as_str()));
        pool.run(|connection| {
            let sql = format!("DROP SCHEMA {schema}");
            Box::pin(async move { connection.batch(&sql).await })
        })
        .await
        .expect("a connection")
        .expect("dropped");
    });
}
