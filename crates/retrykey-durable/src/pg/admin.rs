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

/// Whether the PostgreSQL tests should run: the URL is set. When it is not, says so on stderr
/// (the tests then return early); under CI (`CI` set) a missing URL is an error instead, so a
/// CI run without the server fails loudly rather than skipping.
pub fn enabled() -> bool {
    if super::url_from_env().is_some() {
        return true;
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "{URL_VAR} is not set, but CI is: the PostgreSQL tests must run in CI (see .ci/postgres)"
        );
    }
    // Straight to the process's stderr, once per test binary: the test harness hides what
    // passing tests print with `eprintln!`, and this line must reach the reader.
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "PostgreSQL not configured: its tests are skipped; set {URL_VAR} to enable \
             (`eval \"$(just postgres)\"` starts a local server)"
        );
    });
    false
}

/// The URL of the test server; call after [`enabled`] returned true.
pub fn url() -> String {
    super::url_from_env().unwrap_or_else(|| panic!("{URL_VAR} is not set"))
}
