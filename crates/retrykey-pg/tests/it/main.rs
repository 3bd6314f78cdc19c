//! The shared pool against a real server: which failures are tried again, which connections
//! are replaced, and what the settings change. The tests that need a server are ignored, with
//! a reason, when `RETRYKEY_PG_URL` is not set (see `retrykey-durable/build.rs`).

mod connections;
mod retries;
mod settings;

use std::future::Future;

use retrykey_pg::{Connection, Pool, Settings, config};

/// The server's URL; the tests that call this are ignored without one.
fn url() -> String {
    std::env::var("RETRYKEY_PG_URL").expect("RETRYKEY_PG_URL names the test server")
}

/// A pool whose connections have `public` on their `search_path`.
fn pool(settings: Settings) -> Pool {
    Pool::new(
        config(&url(), "public", "retrykey-pg-tests").expect("a valid URL"),
        settings,
    )
}

/// Runs `future` to its end on a runtime of its own: each test is a plain function.
fn block<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(future)
}

/// The server process behind the connection the pool hands out next.
async fn backend(pool: &Pool) -> i32 {
    pool.run(|connection: &mut Connection| {
        Box::pin(async move {
            let row = connection.one("SELECT pg_backend_pid()", &[]).await?;
            Ok::<i32, tokio_postgres::Error>(row.get(0))
        })
    })
    .await
    .expect("a connection")
    .expect("an answer")
}

/// A statement that fails with the SQLSTATE `code` (a condition name such as `deadlock_detected`).
fn raise(code: &str) -> String {
    format!("DO $$ BEGIN RAISE EXCEPTION 'raised on purpose' USING ERRCODE = '{code}'; END $$")
}
