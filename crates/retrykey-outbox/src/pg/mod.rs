//! PostgreSQL: the document service's schema, holding the Stage 4 ledger and the outbox side by
//! side, for documents services and dispatchers on several machines.
//!
//! The accepting transaction lives in [`accept`]; the outbox's statements in [`events`]. A
//! dispatcher's claim is one `UPDATE` over rows picked with `FOR UPDATE SKIP LOCKED`, so two
//! dispatchers never claim the same event at once and neither waits for the other.

pub mod accept;
pub mod events;

use std::sync::Arc;

use retrykey::{Key, Receipt, Request};
use retrykey_durable::PgLedger;
use retrykey_durable::pg::{Pool, storage};
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
CREATE INDEX IF NOT EXISTS outbox_due ON outbox (due_at) WHERE state = 'pending';
CREATE SEQUENCE IF NOT EXISTS outbox_token;
CREATE INDEX IF NOT EXISTS operations_by_number ON operations (scope, operation);
";

/// The document service's database in one PostgreSQL schema.
#[derive(Debug)]
pub struct PgDocuments {
    ledger: PgLedger,
    pool: Arc<Pool>,
    options: DocumentsOptions,
}

impl PgDocuments {
    /// Connects to `url` and creates what is missing in `options.pg_schema`. Blocks.
    pub fn connect(url: &str, options: DocumentsOptions) -> Result<Self, Error> {
        // The ledger's tables first: the outbox's index is on one of them.
        let ledger = PgLedger::open(url, options.ledger())?;
        let pool = Pool::connect(
            url,
            &options.pg_schema,
            options.pg_connections,
            "retrykey-outbox",
        )?;
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
        Ok(Self {
            ledger,
            pool: Arc::new(pool),
            options,
        })
    }

    /// Accepts `job` under `key`: the job and its event commit together.
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

    /// Runs `work` on one of the outbox's connections.
    pub(crate) fn run<T>(
        &self,
        work: impl AsyncFnMut(&mut tokio_postgres::Client) -> Result<T, retrykey::Error>,
    ) -> Result<T, Error> {
        self.pool.run(work).map_err(Error::postgres)
    }
}
