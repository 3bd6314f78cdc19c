//! A plain connection for the checks: look at the server from outside a ledger.

use retrykey_durable::Error;
use retrykey_durable::pg::{URL_VAR, check_identifier, url_from_env};
use tokio::runtime::Runtime;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config, NoTls};

/// One connection with its own small runtime. Do not use it from inside a ledger's
/// transaction hook directly: a hook runs inside the ledger's runtime, so call it from another
/// thread there.
#[derive(Debug)]
pub struct Admin {
    runtime: Runtime,
    client: Client,
}

impl Admin {
    /// Connects to `url`, with `search_path` set to `schema`.
    pub fn connect(url: &str, schema: &str) -> Result<Self, Error> {
        check_identifier(schema)?;
        let mut config: Config = url.parse()?;
        config.application_name("retrykey-admin");
        config.options(format!("-c search_path={schema}"));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (client, connection) = runtime.block_on(config.connect(NoTls))?;
        // The connection task ends when the client is dropped or the server goes away.
        runtime.spawn(connection);
        Ok(Self { runtime, client })
    }

    /// Runs statements that return nothing (`BEGIN`, `COMMIT`, DDL).
    pub fn batch(&self, sql: &str) -> Result<(), Error> {
        Ok(self.runtime.block_on(self.client.batch_execute(sql))?)
    }

    /// The first column of the first row, as a 64-bit integer.
    pub fn number(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<i64, Error> {
        let row = self.runtime.block_on(self.client.query_one(sql, params))?;
        Ok(row.get(0))
    }
}

/// The URL of the test server. A test built for PostgreSQL that runs without it fails here.
pub fn url() -> String {
    url_from_env().unwrap_or_else(|| {
        panic!(
            "{URL_VAR} is not set, but this test was built to run on PostgreSQL (see .ci/postgres)"
        )
    })
}
