// Mirrored by labs/check-then-insert: see labs/README.md before changing this file.
//! The PostgreSQL ledger: its table layout, and the one transaction that writes the effect and
//! the record together.

use std::sync::Arc;
use std::time::SystemTime;

use crate::crash::Point;
use crate::options::unix_seconds;
use crate::pg::transaction::Transaction;
use crate::pg::{
    self, BlockingPool, add_effect, add_effect_within_limits, insert_record, lookup, read_state,
    schema,
};
use crate::{LedgerOptions, PgTx, WithRecord};
use retrykey::{Error, Key, Ledger, Receipt, Request};
use tokio_postgres::Client;

/// The tables, created if missing. The unique index on `(scope, key)` is what decides which of
/// two concurrent writers of one key is first.
const LAYOUT: &str = "
-- ANCHOR: pg_tables
CREATE TABLE IF NOT EXISTS ledger (
    scope      text   PRIMARY KEY,
    total      bigint NOT NULL,
    records    bigint NOT NULL,
    operations bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS operations (
    scope           text    NOT NULL,
    key             text    NOT NULL,
    job             text    NOT NULL,
    units           bigint  NOT NULL,
    operation       bigint  NOT NULL,
    committed_total bigint  NOT NULL,
    schema_version  integer NOT NULL,
    created_at      bigint  NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS operations_first_writer ON operations (scope, key);
CREATE INDEX IF NOT EXISTS operations_by_age ON operations (scope, created_at);
-- ANCHOR_END: pg_tables
";

/// A [`Ledger`] in PostgreSQL, shared by every process that opens the same schema and scope.
#[derive(Debug)]
pub struct PgLedger {
    pool: Arc<BlockingPool>,
    options: LedgerOptions,
    ephemeral: bool,
}

impl PgLedger {
    /// Connects to `url` and prepares the tables in `options.pg_schema`.
    pub fn open(url: &str, options: LedgerOptions) -> Result<Self, crate::Error> {
        let pool = BlockingPool::connect(
            url,
            &options.pg_schema,
            options.pg_connections,
            &options.pg_application_name,
        )?;
        Self::with_pool(Arc::new(pool), options)
    }

    /// Prepares the tables on `pool`, which its caller may share: a program that keeps other
    /// tables in the same schema then logs in once.
    pub fn with_pool(
        pool: Arc<BlockingPool>,
        options: LedgerOptions,
    ) -> Result<Self, crate::Error> {
        let scope = options.scope.clone();
        let now = unix_seconds(SystemTime::now());
        // Outer error: no connection. Inner: a refused version or a failed migration, kept typed.
        pool.run(async |client| Ok(schema::prepare(client, LAYOUT, &scope, now).await))
            .map_err(|error| crate::Error::Config(error.to_string()))??;
        Ok(Self {
            pool,
            options,
            ephemeral: false,
        })
    }

    /// A fresh, empty ledger at `url`: a new scope in a schema shared by the ephemeral ledgers
    /// of this crate; the scope's rows are deleted on drop. A test knob, compiled only with the
    /// `test-support` feature.
    #[cfg(feature = "test-support")]
    pub fn ephemeral(url: &str, limits: retrykey::Limits) -> Result<Self, crate::Error> {
        use std::sync::atomic::{AtomicU64, Ordering};

        static NEXT: AtomicU64 = AtomicU64::new(0);
        let scope = format!(
            "ephemeral-{}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed),
            unix_seconds(SystemTime::now()),
        );
        let options = LedgerOptions {
            scope,
            pg_schema: format!("rk_ephemeral_{}", env!("CARGO_CRATE_NAME")),
            ..LedgerOptions::with_limits(limits)
        };
        let pool =
            BlockingPool::shared(url, &options.pg_schema, options.pg_connections, "retrykey")?;
        let mut ledger = Self::with_pool(pool, options)?;
        ledger.ephemeral = true;
        Ok(ledger)
    }

    /// Applies as [`Ledger::apply`] does, and runs `also` inside the same transaction, sent
    /// with the record and before the commit, for a new operation only (a replay writes
    /// nothing). Rows `also` writes commit with the effect and the record, or not at all.
    pub fn apply_with(
        &self,
        key: &Key,
        request: &Request,
        also: &dyn WithRecord<PgTx>,
    ) -> Result<Receipt, Error> {
        self.pool
            .run(async |client| self.apply_once(client, key, request, also).await)
    }

    /// The options it was opened with.
    pub fn options(&self) -> &LedgerOptions {
        &self.options
    }

    /// Deletes the records created before `now` minus the retention window; returns how many.
    pub fn sweep(&self, now: SystemTime) -> Result<usize, Error> {
        let cutoff = self.options.sweep_cutoff(now);
        let scope = &self.options.scope;
        self.pool
            .run(async |client| pg::delete_expired(client, scope, cutoff).await)
    }

    async fn apply_once(
        &self,
        client: &mut Client,
        key: &Key,
        request: &Request,
        also: &dyn WithRecord<PgTx>,
    ) -> Result<Receipt, Error> {
        let scope = self.options.scope.as_str();
        let hooks = &self.options.hooks;

        // One round trip carries BEGIN, the lookup and the effect. The effect statement writes
        // nothing when the key has a record, so the lookup's answer comes first: a replay is
        // answered even when the ledger is full, and takes no lock. For a new key the effect
        // has locked the scope's ledger row, which orders the new operations of this scope.
        // Another transaction may still record this key before we do: the unique index below
        // catches that.
        hooks.at(Point::BeforeEffect);
        let limits = self.options.limits;
        let (tx, (found, added)) = Transaction::begin_with(client, async {
            let (found, added) = tokio::join!(
                biased;
                lookup(client, scope, key),
                add_effect_within_limits(client, scope, key, request.units(), limits),
            );
            Ok((found?, added?))
        })
        .await?;
        if let Some(stored) = found {
            // Nothing was written: end the transaction and answer from the record.
            tx.rollback().await?;
            return stored.replay(request);
        }
        let written = self.record(&tx, key, request, added, also).await;
        match written {
            Ok(Some(receipt)) => {
                hooks.at(Point::AfterRecord);
                tx.commit().await?;
                hooks.at(Point::AfterCommit);
                Ok(receipt)
            }
            Ok(None) => {
                // A concurrent transaction recorded this key first and has committed: undo our
                // effect and answer from the winner's record.
                tx.rollback().await?;
                let winner = lookup(client, scope, key).await?;
                winner
                    .ok_or_else(lost_race)
                    .and_then(|stored| stored.replay(request))
            }
            Err(error) => {
                tx.rollback().await?;
                Err(error)
            }
        }
    }

    /// Completes the effect when the first round trip did not write it (`added` is `None`), then
    /// writes the record and whatever else commits with it, in `tx`: the receipt, or `None`
    /// when a concurrent transaction recorded the key first.
    async fn record(
        &self,
        tx: &Transaction<'_>,
        key: &Key,
        request: &Request,
        added: Option<Receipt>,
        also: &dyn WithRecord<PgTx>,
    ) -> Result<Option<Receipt>, Error> {
        let receipt = match added {
            Some(receipt) => receipt,
            None => self.effect_after_refusal(tx, request).await?,
        };
        self.options.hooks.at(Point::AfterEffect);
        // The record, in the same transaction: both commit, or neither does.
        // Whatever else must commit with the record (Stage 7: the job's outgoing event)
        // goes in the same round trip: the row lock taken by the effect is held for one
        // round trip less. If the record yields to a concurrent one, everything rolls back.
        let created_at = unix_seconds(SystemTime::now());
        let scope = self.options.scope.as_str();
        let (inserted, also) = tokio::join!(
            biased;
            insert_record(tx.client(), scope, key, request, receipt, created_at),
            also.write(tx.client(), receipt),
        );
        let inserted = inserted?;
        also?;
        Ok(inserted.then_some(receipt))
    }

    /// The effect statement wrote nothing for a key the lookup did not find: a limit refused
    /// it, a value lies beyond what SQL compares, or another transaction recorded the key in
    /// between. Decide exactly on the locked ledger row: refuse (capacity first, then ceiling,
    /// their Stage 1 meaning), or write the effect after all and return its receipt; in the last
    /// case the unique index then makes the record yield, and the whole transaction rolls back.
    async fn effect_after_refusal(
        &self,
        tx: &Transaction<'_>,
        request: &Request,
    ) -> Result<Receipt, Error> {
        let scope = self.options.scope.as_str();
        let limits = self.options.limits;
        let state = read_state(tx.client(), scope, true).await?;
        let total = limits.admit(state.records, state.total, request.units())?;
        add_effect(tx.client(), scope, total).await?;
        Ok(Receipt {
            operation: state.operations + 1,
            total,
            replayed: false,
        })
    }
}

fn lost_race() -> Error {
    Error::Storage("the record that won the race was swept before it could be read; retry".into())
}

impl Ledger for PgLedger {
    fn apply(&self, key: &Key, request: &Request) -> Result<Receipt, Error> {
        self.apply_with(key, request, &())
    }

    fn total(&self) -> Result<u64, Error> {
        let scope = &self.options.scope;
        let state = self
            .pool
            .run(async |client| read_state(client, scope, false).await)?;
        Ok(state.total)
    }

    fn records(&self) -> Result<usize, Error> {
        let scope = &self.options.scope;
        let state = self
            .pool
            .run(async |client| read_state(client, scope, false).await)?;
        Ok(state.records as usize)
    }

    fn receipt(&self, key: &Key) -> Result<Option<Receipt>, Error> {
        let scope = &self.options.scope;
        let stored = self
            .pool
            .run(async |client| lookup(client, scope, key).await)?;
        Ok(stored.map(|stored| stored.receipt))
    }
}

impl Drop for PgLedger {
    fn drop(&mut self) {
        if self.ephemeral {
            let scope = &self.options.scope;
            let _ = self
                .pool
                .run(async |client| pg::forget_scope(client, scope).await);
        }
    }
}
