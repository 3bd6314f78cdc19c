//! The response store in PostgreSQL, shared by every replica that reaches the database.
//!
//! The same records, leases, tokens and bounds as `sqlite/`, with one difference in how writes
//! are kept apart: SQLite lets one writer at a time hold the file, PostgreSQL locks rows. A
//! claim meets other claims of its key on the key's row (`claim.rs`), a fenced write locks the
//! row it checks (`fence.rs`), and the entry bound is kept exact without one row that every
//! claim would lock (`usage.rs`). Tokens come from a sequence, which only grows.
//!
//! # Example
//!
//! ```no_run
//! use retrykey_http::IdempotencyLayer;
//! use retrykey_replicas::{PgEntries, StoreOptions};
//!
//! # async fn run() -> Result<(), retrykey_http::Error> {
//! let url = "postgres://retrykey:retrykey@127.0.0.1:5432/retrykey";
//! let store = PgEntries::connect(url, StoreOptions::default()).await?;
//! let layer = IdempotencyLayer::builder().store(store.clone()).build();
//! # let _ = layer;
//! # Ok(())
//! # }
//! ```

mod claim;
mod commit;
mod fence;
mod pool;
mod schema;
mod usage;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use retrykey_http::{EntryId, Error, Fingerprint, Reserve, Token};

use crate::StoreOptions;
use crate::record::ResponseColumns;
use crate::store::{ClaimTerms, Common, DbEntries, StoreBackend, StoredAnswer};
use crate::wait::EntryRow;

use pool::{Connection, FailClosedPool, PgResult};
use usage::SWEEP_BATCH;

/// Connections per store: enough for a replica's concurrent requests on a small machine,
/// few enough that many replicas stay under the server's `max_connections`.
pub const CONNECTIONS: usize = 8;

/// The schema [`PgEntries::connect`] keeps its tables in.
pub const DEFAULT_SCHEMA: &str = "retrykey_http";

/// A [`Entries`](retrykey_http::Entries) in PostgreSQL: any number of replicas, one authority.
///
/// Cloning is cheap and shares the connections.
pub type PgEntries = DbEntries<PgBackend>;

/// The PostgreSQL side of a [`PgEntries`]: its connections, schema and sweeps.
#[derive(Debug)]
pub struct PgBackend {
    pool: FailClosedPool,
    common: Common,
    schema: String,
    /// Where to drop the schema from when the last clone goes (a throwaway store).
    throwaway: Option<String>,
    /// Claims made, to give every [`SWEEP_EVERY`]th one the sweep of the claims between.
    claims: AtomicU64,
}

impl PgEntries {
    /// Connects to the database at `url` and creates the tables in [`DEFAULT_SCHEMA`] if
    /// missing. Fails (rather than later) when the URL is wrong or the server is down.
    pub async fn connect(url: &str, options: StoreOptions) -> Result<Self, Error> {
        Self::connect_in_schema(url, DEFAULT_SCHEMA, options).await
    }

    /// The same, with the tables in `schema` (lower-case letters, digits and `_`).
    pub async fn connect_in_schema(
        url: &str,
        schema: &str,
        options: StoreOptions,
    ) -> Result<Self, Error> {
        Self::open(url, schema, options, false).await
    }

    /// A store in a new, empty schema, dropped when the last clone is dropped: a test knob,
    /// compiled only with the `test-support` feature.
    #[cfg(feature = "test-support")]
    pub async fn throwaway(url: &str, options: StoreOptions) -> Result<Self, Error> {
        let schema = format!("rk_http_{}", crate::store::throwaway_name());
        // Dropped first: left over, perhaps, by an earlier process with the same id.
        let mut store = Self::open(url, &schema, options, true).await?;
        if let Some(inner) = Arc::get_mut(&mut store.inner) {
            inner.throwaway = Some(url.to_owned());
        }
        Ok(store)
    }

    async fn open(
        url: &str,
        schema: &str,
        options: StoreOptions,
        fresh: bool,
    ) -> Result<Self, Error> {
        schema::check_identifier(schema)?;
        let pool = FailClosedPool::new(url, schema, CONNECTIONS)?;
        let limits = options.limits;
        let schema_name = schema.to_owned();
        pool.run(move |conn| {
            let schema = schema_name.clone();
            Box::pin(async move { Ok(schema::prepare(conn, &schema, limits, fresh).await) })
        })
        .await??;
        Ok(Self {
            inner: Arc::new(PgBackend {
                pool,
                common: Common::new(options),
                schema: schema.to_owned(),
                throwaway: None,
                claims: AtomicU64::new(0),
            }),
        })
    }

    /// The schema this store's tables live in.
    pub fn schema(&self) -> &str {
        &self.inner.schema
    }

    /// How many entries are held (running and finished, expired ones not yet swept included).
    pub async fn entries(&self) -> Result<u64, Error> {
        self.inner
            .pool
            .run(|conn| {
                Box::pin(async move {
                    let row = conn.one("SELECT count(*) FROM http_keys", &[]).await?;
                    Ok(row.get::<_, i64>(0).cast_unsigned())
                })
            })
            .await
    }

    /// Deletes every finished entry past its retention; returns how many went. Claims do this
    /// too, a few at a time, and all of it before refusing a key for lack of room.
    ///
    /// A sweep never stalls claims, however long its backlog (a day's expired keys of a busy
    /// service are millions). It deletes in chunks of [`SWEEP_CHUNK`](usage::SWEEP_CHUNK)
    /// records, oldest first through the `expires_at` index, each chunk one statement that is
    /// a transaction of its own: it holds its records' rows and one usage row for the few
    /// milliseconds of one chunk, not for the whole backlog, and a claim's own sweep skips
    /// (`SKIP LOCKED`) at most one chunk's rows. Each chunk credits a different usage row,
    /// and locks it after its records, in the order every transaction keeps (`usage.rs`), so
    /// the room freed spreads over the rows and no deadlock is possible. Each chunk starts
    /// where the last one ended, so the index entries of records deleted before, which stay
    /// until the table is vacuumed, are not walked again and again. A record skipped because
    /// another transaction held it is left to the next sweep, or to that transaction.
    pub async fn sweep(&self) -> Result<u64, Error> {
        let now = self.inner.common.options.clock.now_ms();
        let (mut swept, mut from) = (0, i64::MIN);
        for round in 0.. {
            let shard = round % usage::SHARDS;
            let chunk = self
                .inner
                .pool
                .run(move |conn| {
                    Box::pin(async move {
                        usage::sweep_chunk(conn, shard, from, now, usage::SWEEP_CHUNK).await
                    })
                })
                .await?;
            swept += chunk.gone.cast_unsigned();
            match chunk.last {
                Some(last) if chunk.gone == usage::SWEEP_CHUNK => from = last,
                _ => break,
            }
        }
        Ok(swept)
    }
}

impl Drop for PgBackend {
    fn drop(&mut self) {
        let Some(url) = self.throwaway.take() else {
            return;
        };
        let schema = self.schema.clone();
        // A thread of its own with its own runtime: this may run inside another runtime (or in
        // its shutdown), where blocking on a future is not allowed.
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            runtime.block_on(async {
                let pool = FailClosedPool::new(&url, "public", 1).ok()?;
                pool.run(move |conn| {
                    let sql = format!("DROP SCHEMA IF EXISTS {schema} CASCADE");
                    Box::pin(async move { conn.batch(&sql).await })
                })
                .await
                .ok()
            })
        })
        .join();
        if !matches!(dropped, Ok(Some(()))) {
            tracing::warn!(schema = %self.schema, "could not drop a throwaway schema");
        }
    }
}

impl StoreBackend for PgBackend {
    fn common(&self) -> &Common {
        &self.common
    }

    async fn row(&self, id: EntryId) -> Result<Option<EntryRow>, Error> {
        self.pool
            .run(move |conn| Box::pin(async move { read_row(conn, &id).await }))
            .await
    }

    async fn claim(&self, id: EntryId, fingerprint: Fingerprint) -> Result<Reserve, Error> {
        let sweep = sweep_batch(&self.claims);
        let options = Arc::new(self.common.options.clone());
        self.pool
            .run(move |conn| {
                let options = Arc::clone(&options);
                Box::pin(async move {
                    let terms = ClaimTerms::now(&options);
                    claim::claim(conn, &id, &fingerprint, &terms, sweep).await
                })
            })
            .await
    }

    async fn renew(&self, id: EntryId, token: Token, until: i64) -> Result<bool, Error> {
        self.pool
            .run(move |conn| Box::pin(async move { fence::renew(conn, &id, token, until).await }))
            .await
    }

    async fn finish(&self, id: EntryId, token: Token, answer: StoredAnswer) -> Result<bool, Error> {
        let answer = Arc::new(answer);
        self.pool
            .run(move |conn| {
                let answer = Arc::clone(&answer);
                Box::pin(async move { fence::finish(conn, &id, token, &answer).await })
            })
            .await
    }

    async fn holder(&self, id: EntryId) -> Result<Option<(Token, String)>, Error> {
        self.pool
            .run(move |conn| {
                Box::pin(async move {
                    let row = conn
                        .opt(
                            "SELECT token, owner FROM http_keys
                             WHERE entry_id = $1 AND expires_at IS NULL",
                            &[&id.as_bytes().as_slice()],
                        )
                        .await?;
                    Ok(row.map(|row| (Token(row.get::<_, i64>(0).cast_unsigned()), row.get(1))))
                })
            })
            .await
    }

    async fn release(&self, id: EntryId, token: Token) -> Result<bool, Error> {
        self.pool
            .run(move |conn| {
                Box::pin(async move {
                    // One statement: the delete, fenced by the token, and the room it
                    // frees, in the row order every transaction keeps (usage.rs).
                    let freed = conn
                        .execute(
                            "WITH gone AS (
                                 DELETE FROM http_keys
                                 WHERE entry_id = $1 AND token = $2::bigint
                                   AND expires_at IS NULL
                                 RETURNING 1)
                             UPDATE http_keys_usage SET room = room + 1
                             WHERE shard = $3 AND EXISTS (SELECT 1 FROM gone)",
                            &[
                                &id.as_bytes().as_slice(),
                                &token.0.cast_signed(),
                                &usage::shard_of(&id),
                            ],
                        )
                        .await?;
                    Ok(freed == 1)
                })
            })
            .await
    }
}

/// One claim in this many sweeps expired records.
pub const SWEEP_EVERY: u64 = 8;

/// How many expired records this claim sweeps: every [`SWEEP_EVERY`]th claim sweeps
/// `SWEEP_EVERY * SWEEP_BATCH`, the others none. The same pace as a few per claim (at most one
/// record is added per claim), for one extra round trip in eight claims instead of in each.
fn sweep_batch(claims: &AtomicU64) -> i64 {
    if claims
        .fetch_add(1, Ordering::Relaxed)
        .is_multiple_of(SWEEP_EVERY)
    {
        SWEEP_BATCH * SWEEP_EVERY.cast_signed()
    } else {
        0
    }
}

/// `id`'s row: fingerprint, lease end, retention end, and the answer once finished.
async fn read_row(conn: &mut Connection, id: &EntryId) -> PgResult<Option<EntryRow>> {
    let row = conn
        .opt(
            "SELECT fingerprint, lease_until, expires_at, status, headers, body, whole, size
             FROM http_keys WHERE entry_id = $1",
            &[&id.as_bytes().as_slice()],
        )
        .await?;
    Ok(row.map(|row| {
        let response = row.get::<_, Option<i32>>(3).map(|status| ResponseColumns {
            status,
            headers: row.get::<_, Option<Vec<u8>>>(4).unwrap_or_default(),
            body: row.get::<_, Option<Vec<u8>>>(5).unwrap_or_default(),
            whole: row.get::<_, Option<bool>>(6).unwrap_or_default(),
            size: row.get(7),
        });
        (row.get(0), row.get(1), row.get(2), response)
    }))
}
