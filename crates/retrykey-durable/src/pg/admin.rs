//! A plain connection for tests and tools: look at the server from outside a ledger.

use tokio::runtime::Runtime;
use tokio_postgres::Client;
use tokio_postgres::types::ToSql;

use super::URL_VAR;

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
    pub fn connect(url: &str, schema: &str) -> Result<Self, crate::Error> {
        let config = super::config(url, schema, "retrykey-admin")?;
        let runtime = super::runtime()?;
        let client = runtime.block_on(super::open(&runtime, &config))?;
        Ok(Self { runtime, client })
    }

    /// Runs statements that return nothing (`BEGIN`, `COMMIT`, DDL).
    pub fn batch(&self, sql: &str) -> Result<(), crate::Error> {
        Ok(self.runtime.block_on(self.client.batch_execute(sql))?)
    }

    /// The first column of the first row, as a 64-bit integer.
    pub fn number(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<i64, crate::Error> {
        let row = self.runtime.block_on(self.client.query_one(sql, params))?;
        Ok(row.get(0))
    }
}

/// A `#[test]` that needs the PostgreSQL server at `RETRYKEY_PG_URL`.
///
/// Without the server the test is *ignored* (`cargo test` counts it so, with the reason), never
/// passed: the choice is made when the tests are built, by the cfg `retrykey_pg` that
/// `build.rs` sets, so the package that uses this macro must use that build script. Under CI the
/// test always runs, and a missing server fails it.
#[macro_export]
macro_rules! postgres_test {
    ($(#[$doc:meta])* fn $name:ident() $body:block) => {
        $(#[$doc])*
        #[test]
        #[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
        fn $name() $body
    };
}

/// The URL of the test server. A test built for PostgreSQL that runs without it fails here.
pub fn url() -> String {
    super::url_from_env().unwrap_or_else(|| {
        panic!(
            "{URL_VAR} is not set, but this test was built to run on PostgreSQL (see .ci/postgres)"
        )
    })
}
