//! PostgreSQL: the document service's schema, holding the Stage 5 ledger and the outbox side by
//! side, for documents services and dispatchers on several machines.
//!
//! The accepting transaction lives in [`accept`]; the outbox's statements in [`events`]. A
//! dispatcher's claim is one `UPDATE` over rows picked with `FOR UPDATE SKIP LOCKED`, so two
//! dispatchers never claim the same event at once and neither waits for the other.

pub mod accept;
pub mod events;
mod store;

use std::sync::Arc;

use retrykey::{Key, Receipt, Request};
use retrykey_durable::PgLedger;
use retrykey_durable::pg::{BlockingPool, Failed, storage};
use retrykey_pg::{Connection, Settings, Work};
use retrykey_program::Clock;

use crate::{Accepted, DocumentsOptions, Error, EventId};

/// The outbox's table, sequence and indexes, as on SQLite (see [`crate::sqlite::SCHEMA`]);
/// created after the ledger's tables.
pub const LAYOUT: &str = "
CREATE TABLE IF NOT EXISTS outbox (
    event_id     TEXT PRIMARY KEY,
    scope        TEXT NOT NULL,
    operation    BIGINT NOT NULL,
    job          TEXT NOT NULL,
    units        BIGINT NOT NULL,
    accepted_at  BIGINT NOT NULL,
    state        TEXT NOT NULL DEFAULT 'pending',
    due_at       BIGINT NOT NULL,
    deliveries   INTEGER NOT NULL DEFAULT 0,
    owner        TEXT,
    token        BIGINT,
    lease_until  BIGINT,
    last_error   TEXT,
    settled_at   BIGINT,
    conversion   BIGINT,
    reason       TEXT,
    UNIQUE (scope, operation)
);
-- In the claim's order: a claim reads the events it takes and stops, with no sort of every
-- pending event. (It replaces an index on the due time alone.)
DROP INDEX IF EXISTS outbox_due;
CREATE INDEX IF NOT EXISTS outbox_claim_order ON outbox (due_at, operation) WHERE state = 'pending';
CREATE SEQUENCE IF NOT EXISTS outbox_token;
CREATE INDEX IF NOT EXISTS operations_by_number ON operations (scope, operation);
";

/// The document service's database in one PostgreSQL schema. A handle: clones share the
/// pools.
#[derive(Debug, Clone)]
pub struct PgOutbox {
    ledger: Arc<PgLedger>,
    /// For the synchronous calls (accepting, which the ledger does): blocks on a runtime of its
    /// own.
    pool: Arc<BlockingPool>,
    /// For the [`OutboxStore`](crate::store::OutboxStore) calls, awaited on the caller's
    /// runtime: no thread blocked per call. Its connections open on first use, on that runtime.
    serving: Arc<retrykey_pg::Pool>,
    options: Arc<DocumentsOptions>,
}

impl PgOutbox {
    /// Connects to `url` and creates what is missing in `options.pg_schema`. Blocks.
    pub fn connect(url: &str, options: DocumentsOptions) -> Result<Self, Error> {
        // One pool for the ledger and the outbox: a one-shot command logs in once. The ledger's
        // tables first: the outbox's index is on one of them.
        let pool = Arc::new(BlockingPool::connect(
            url,
            &options.pg_schema,
            options.pg_connections,
            "retrykey-documents",
        )?);
        let ledger = Arc::new(PgLedger::with_pool(Arc::clone(&pool), options.ledger())?);
        pool.run(async |client| {
            // Two processes creating the tables at once would race in the catalog.
            let tx = client.transaction().await.map_err(storage)?;
            tx.batch_execute("SELECT pg_advisory_xact_lock(7305)")
                .await
                .map_err(storage)?;
            tx.batch_execute(LAYOUT).await.map_err(storage)?;
            tx.commit().await.map_err(storage)
        })
        .map_err(Error::postgres)?;
        let config = retrykey_pg::config(url, &options.pg_schema, "retrykey-outbox")
            .map_err(retrykey_durable::Error::from)?;
        let serving = retrykey_pg::Pool::new(config, Settings::new(options.pg_connections));
        Ok(Self {
            ledger,
            pool,
            serving: Arc::new(serving),
            options: Arc::new(options),
        })
    }

    /// Accepts `job` under `key`: the job and its event commit together. Blocks, as the ledger
    /// does; as an [`OutboxStore`](crate::store::OutboxStore) call it runs on a blocking thread.
    pub fn accept(&self, key: &Key, job: &Request) -> Result<Accepted, Error> {
        accept::accept(self, key, job)
    }

    /// The ledger jobs are accepted by.
    pub fn ledger(&self) -> &PgLedger {
        &self.ledger
    }

    /// The scope jobs are accepted in.
    pub fn scope(&self) -> &str {
        &self.options.scope
    }

    /// How a delivery's mark commits.
    pub fn marks(&self) -> crate::Marks {
        self.options.marks
    }

    /// The clock this database reads.
    pub fn clock(&self) -> Clock {
        self.options.clock
    }

    /// The clock's time, in ms since the Unix epoch.
    pub fn now_ms(&self) -> i64 {
        self.options.clock.now_ms()
    }

    /// The answer for the job `receipt` names: the receipt and the job's event, `written` when
    /// this very call wrote it (a replay reads the event the first call wrote).
    pub fn accepted(&self, receipt: Receipt, written: EventId) -> Result<Accepted, Error> {
        if !receipt.replayed {
            return Ok(Accepted {
                receipt,
                event: written,
            });
        }
        let scope = self.scope();
        let event =
            self.run(async |client| events::event_of_job(client, scope, receipt.operation).await)?;
        let event = event.ok_or(Error::EventMissing {
            operation: receipt.operation,
        })?;
        Ok(Accepted { receipt, event })
    }

    /// Runs `work` on one of the ledger's pool's connections, blocking.
    fn run<T>(
        &self,
        work: impl AsyncFnMut(&mut tokio_postgres::Client) -> Result<T, retrykey::Error>,
    ) -> Result<T, Error> {
        self.pool.run(work).map_err(Error::postgres)
    }

    /// Runs `work` on one of the serving connections, awaited on the caller's runtime. Like
    /// every pool's work, it owns what it uses: it may run more than once.
    async fn run_async<T, F>(&self, work: F) -> Result<T, Error>
    where
        F: for<'c> FnMut(&'c mut Connection) -> Work<'c, T, Failed>,
    {
        match self.serving.run(work).await {
            Ok(done) => done.map_err(|Failed(error)| Error::postgres(error)),
            Err(error) => Err(Error::Postgres(Box::new(error))),
        }
    }
}
