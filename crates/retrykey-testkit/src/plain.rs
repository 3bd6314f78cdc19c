//! One plain PostgreSQL connection with its own small runtime: a look at the server from
//! outside any ledger or store (no pool, no schema created on connect).

use anyhow::Context;
use tokio_postgres::NoTls;

/// Runs `f` on a fresh connection to `url`, in a runtime of its own. Not for use inside
/// another runtime: call it from a plain thread there.
fn with_client<T>(
    url: &str,
    f: impl AsyncFnOnce(&tokio_postgres::Client) -> Result<T, tokio_postgres::Error>,
) -> anyhow::Result<T> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start a runtime for a plain connection")?;
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(url, NoTls)
            .await
            .context("cannot connect to PostgreSQL")?;
        // The connection task ends when the client is dropped or the server goes away.
        tokio::spawn(connection);
        Ok(f(&client).await?)
    })
}

/// Runs statements that return nothing (DDL).
pub(crate) fn batch(url: &str, sql: &str) -> anyhow::Result<()> {
    with_client(url, async |client| client.batch_execute(sql).await)
}

/// The first column of the first row of `sql`, as a 64-bit integer.
pub(crate) fn number(url: &str, sql: &str) -> anyhow::Result<i64> {
    with_client(url, async |client| {
        Ok(client.query_one(sql, &[]).await?.get(0))
    })
}
