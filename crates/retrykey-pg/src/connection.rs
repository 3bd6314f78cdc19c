//! One open connection and the statements prepared on it.

use std::collections::HashMap;
use std::time::Duration;

use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config, NoTls, Row, Statement};

use crate::Error;

/// How long opening a connection may take: a server that does not answer must not hold a
/// caller for as long as the operating system keeps trying.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// What a database call returns.
type PgResult<T> = Result<T, tokio_postgres::Error>;

/// An open connection and the statements prepared on it.
pub struct Connection {
    client: Client,
    /// Prepared once per connection: a cached statement costs one round trip per use where an
    /// unprepared one costs two.
    statements: HashMap<&'static str, Statement>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("prepared", &self.statements.len())
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Opens a connection; its driver runs as a task of the current runtime and ends when the
    /// client is dropped or the server goes away.
    pub(crate) async fn open(config: &Config) -> Result<Self, Error> {
        let connecting = tokio::time::timeout(CONNECT_TIMEOUT, config.connect(NoTls));
        let (client, connection) = connecting
            .await
            .map_err(|_elapsed| Error::ConnectTimeout(CONNECT_TIMEOUT))??;
        // Its error, if any, is the one the next call on the client reports.
        tokio::spawn(async move { connection.await.ok() });
        Ok(Self {
            client,
            statements: HashMap::new(),
        })
    }

    /// The client, for work that needs more than the calls below.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The client, mutably: `Client::transaction` asks for it.
    pub fn client_mut(&mut self) -> &mut Client {
        &mut self.client
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    /// `sql`, prepared on this connection the first time it is asked for.
    pub async fn prepared(&mut self, sql: &'static str) -> PgResult<Statement> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.client.prepare(sql).await?;
        self.statements.insert(sql, statement.clone());
        Ok(statement)
    }

    /// At most one row.
    pub async fn opt(
        &mut self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> PgResult<Option<Row>> {
        let statement = self.prepared(sql).await?;
        self.client.query_opt(&statement, params).await
    }

    /// Exactly one row.
    pub async fn one(
        &mut self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> PgResult<Row> {
        let statement = self.prepared(sql).await?;
        self.client.query_one(&statement, params).await
    }

    /// Every row.
    pub async fn all(
        &mut self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> PgResult<Vec<Row>> {
        let statement = self.prepared(sql).await?;
        self.client.query(&statement, params).await
    }

    /// How many rows the statement changed.
    pub async fn execute(
        &mut self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> PgResult<u64> {
        let statement = self.prepared(sql).await?;
        self.client.execute(&statement, params).await
    }

    /// `prefix` (a statement without parameters, such as `SAVEPOINT`), then `sql`, sent
    /// together: one round trip instead of two.
    pub async fn execute_after(
        &mut self,
        prefix: &str,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> PgResult<u64> {
        let statement = self.prepared(sql).await?;
        // Requests go out in the order they are first polled: `prefix` first.
        let ((), changed) = tokio::try_join!(
            self.client.batch_execute(prefix),
            self.client.execute(&statement, params)
        )?;
        Ok(changed)
    }

    /// `prefix` (a statement without parameters, such as `BEGIN`), then `sql`, sent together;
    /// at most one row of `sql`.
    pub async fn opt_after(
        &mut self,
        prefix: &str,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> PgResult<Option<Row>> {
        let statement = self.prepared(sql).await?;
        let ((), row) = tokio::try_join!(
            self.client.batch_execute(prefix),
            self.client.query_opt(&statement, params)
        )?;
        Ok(row)
    }

    /// `sql`, then `COMMIT`, sent together: the last write of a transaction and its commit in
    /// one round trip. Should `sql` fail, the server answers the `COMMIT` with a rollback.
    pub async fn execute_and_commit(
        &mut self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> PgResult<u64> {
        let statement = self.prepared(sql).await?;
        let (changed, ()) = tokio::try_join!(
            self.client.execute(&statement, params),
            self.client.batch_execute("COMMIT")
        )?;
        Ok(changed)
    }

    /// Statements without parameters or results (`BEGIN`, `COMMIT`, DDL), sent as one
    /// simple-protocol message.
    pub async fn batch(&self, sql: &str) -> PgResult<()> {
        self.client.batch_execute(sql).await
    }
}
