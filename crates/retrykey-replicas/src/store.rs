//! The store and the payments ledger, written once over both databases.
//!
//! What a lookup, a reservation, a completion and a release do around the database is the same
//! on SQLite and PostgreSQL: look, claim, keep the lease renewed while the attempt runs, pass the
//! crash points, remember an answer a handler's commit already stored (`effect.rs`). A [`StoreBackend`]
//! holds only what differs: the SQL, how writes are kept apart (one writer per file, or row
//! locks), and how its errors become the layer's.

use std::future::Future;
use std::sync::Arc;

use retrykey_crashpoints::at;
use retrykey_http::{
    Entries, EntriesFuture, EntryId, Error, Fingerprint, Lookup, Reserve, StoreLimits,
    StoredResponse, Token,
};

use crate::StoreOptions;
use crate::attempts::Attempts;
use crate::crash::Point;
use crate::lease::millis;
use crate::record::ResponseColumns;
use crate::wait::{EntryRow, Seen};

/// One database's side of a store: each method is one transaction (or one read) in it.
pub(crate) trait StoreBackend: Send + Sync + 'static {
    /// The name of its store, for `Debug`.
    /// What it holds as every store does.
    fn common(&self) -> &Common;

    /// The options the store was opened with.
    fn options(&self) -> &StoreOptions {
        &self.common().options
    }

    /// The attempts this process is running on the store.
    fn attempts(&self) -> &Attempts {
        &self.common().attempts
    }

    /// `id`'s row, read in one statement.
    fn row(&self, id: EntryId) -> impl Future<Output = Result<Option<EntryRow>, Error>> + Send;

    /// Claims `id` for a first attempt (sweeping some expired records on the way).
    fn claim(
        &self,
        id: EntryId,
        fingerprint: Fingerprint,
    ) -> impl Future<Output = Result<Reserve, Error>> + Send;

    /// Extends the lease of `id` held with `token` to `until`; false once another holds it.
    fn renew(
        &self,
        id: EntryId,
        token: Token,
        until: i64,
    ) -> impl Future<Output = Result<bool, Error>> + Send;

    /// Stores the answer of `id` if `token` still holds it; true also when the charge already
    /// stored that answer under the same token.
    fn finish(
        &self,
        id: EntryId,
        token: Token,
        answer: StoredAnswer,
    ) -> impl Future<Output = Result<bool, Error>> + Send;

    /// The token and owner of `id`'s record while it is in flight.
    fn holder(
        &self,
        id: EntryId,
    ) -> impl Future<Output = Result<Option<(Token, String)>, Error>> + Send;

    /// Deletes the in-flight record of `id` held with `token`; false if it was not.
    fn release(
        &self,
        id: EntryId,
        token: Token,
    ) -> impl Future<Output = Result<bool, Error>> + Send;
}

/// What a claim needs besides the row: who claims, for how long, and the bounds.
pub struct ClaimTerms<'a> {
    /// Now, in ms since the epoch, by the store's clock.
    pub now_ms: i64,
    /// How long the lease is, in ms.
    pub lease_ms: i64,
    /// The replica that claims.
    pub owner: &'a str,
    /// The store's bounds.
    pub limits: StoreLimits,
}

impl<'a> ClaimTerms<'a> {
    /// The terms of a claim made now under `options`.
    pub(crate) fn now(options: &'a StoreOptions) -> Self {
        Self {
            now_ms: options.clock.now_ms(),
            lease_ms: millis(options.lease.duration),
            owner: &options.owner,
            limits: options.limits,
        }
    }
}

/// What every store holds, whatever its database: its options, and this process's attempts
/// on it.
#[derive(Debug)]
pub(crate) struct Common {
    pub(crate) options: StoreOptions,
    pub(crate) attempts: Attempts,
}

impl Common {
    /// A store's, opened with `options`.
    pub(crate) fn new(options: StoreOptions) -> Self {
        Self {
            options,
            attempts: Attempts::default(),
        }
    }
}

/// A key's answer as it is stored: its columns, and when it expires.
pub(crate) struct StoredAnswer {
    pub(crate) columns: ResponseColumns,
    pub(crate) expires_at: i64,
}

impl StoredAnswer {
    /// `response`, stored now: kept for the store's retention.
    pub(crate) fn now(response: &StoredResponse, options: &StoreOptions) -> Self {
        Self {
            columns: ResponseColumns::of(response),
            expires_at: options.clock.now_ms() + millis(options.limits.retention),
        }
    }
}

/// What is known about `id` now: its row, read by `backend`, as of now.
async fn seen<B: StoreBackend>(backend: &Arc<B>, id: EntryId) -> Result<Seen, Error> {
    let now = backend.options().clock.now_ms();
    Seen::from_row(backend.row(id).await?, now)
}

/// A name no other throwaway store of this process has had, nor one of an earlier process
/// with another id: `<pid>_<n>`.
#[cfg(feature = "test-support")]
pub(crate) fn throwaway_name() -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let next = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}_{next}", std::process::id())
}

/// A [`Entries`] in a database: [`crate::PgEntries`] or [`crate::SqliteEntries`].
///
/// Cloning is cheap and shares the connections.
pub struct DbEntries<B> {
    pub(crate) inner: Arc<B>,
}

impl<B> Clone for DbEntries<B> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<B: std::fmt::Debug> std::fmt::Debug for DbEntries<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt(f)
    }
}

#[expect(
    private_bounds,
    reason = "a backend is the crate's own, its stores are public"
)]
impl<B: StoreBackend> DbEntries<B> {
    /// The options it was opened with.
    pub fn options(&self) -> &StoreOptions {
        self.inner.options()
    }

    /// Releases `id`'s record if this process claimed it and no attempt of this process holds
    /// it: a claim whose reply was lost, which nobody will run or renew. Whether it went.
    async fn release_orphan(&self, id: EntryId) -> Result<bool, Error> {
        let options = self.inner.options();
        match self.inner.holder(id).await? {
            Some((token, owner))
                if owner == options.owner && !self.inner.attempts().runs(token) =>
            {
                tracing::info!(entry = ?id, token = token.0, "released a claim whose reply was lost");
                self.inner.release(id, token).await
            }
            _ => Ok(false),
        }
    }

    /// Renews the lease of the attempt holding `token` while it runs (see `attempts.rs`).
    fn keep_renewing(&self, id: EntryId, token: Token) {
        let inner = Arc::clone(&self.inner);
        let options = self.inner.options();
        let (lease, clock) = (options.lease, options.clock);
        self.inner
            .attempts()
            .keep_renewing(id, token, lease, clock, move |until| {
                let inner = Arc::clone(&inner);
                async move { inner.renew(id, token, until).await }
            });
    }
}

impl<B: StoreBackend> Entries for DbEntries<B> {
    fn lookup<'a>(&'a self, id: &'a EntryId) -> EntriesFuture<'a, Lookup> {
        EntriesFuture::new(async move {
            let mut now = seen(&self.inner, *id).await?;
            if matches!(now, Seen::Lapsed) {
                tracing::info!(
                    decision = "takeover",
                    "the key's owner stopped renewing its lease: a claim takes it over"
                );
            }
            if matches!(now, Seen::InFlight(_))
                && self.inner.attempts().settle_doubt(id)
                && self.release_orphan(*id).await?
            {
                now = Seen::Absent;
            }
            let inner = Arc::clone(&self.inner);
            let id = *id;
            Ok(now.into_lookup(move || {
                let inner = Arc::clone(&inner);
                async move { seen(&inner, id).await }
            }))
        })
    }

    fn reserve<'a>(
        &'a self,
        id: &'a EntryId,
        fingerprint: &'a Fingerprint,
    ) -> EntriesFuture<'a, Reserve> {
        EntriesFuture::new(async move {
            let reserve = self.inner.claim(*id, *fingerprint).await.inspect_err(|_| {
                // The claim may have committed with its reply lost: the next lookup of the
                // key checks for a record of this process's that no attempt runs.
                self.inner.attempts().doubt(*id);
            })?;
            if let Reserve::Reserved(token) = reserve {
                self.keep_renewing(*id, token);
                at(Point::Reserved);
            }
            Ok(reserve)
        })
    }

    fn complete<'a>(
        &'a self,
        id: &'a EntryId,
        token: Token,
        response: StoredResponse,
    ) -> EntriesFuture<'a, ()> {
        EntriesFuture::new(async move {
            if self.inner.attempts().end(token) {
                return Ok(()); // the handler's commit stored this very answer with its rows
            }
            let answer = StoredAnswer::now(&response, self.inner.options());
            let done = self.inner.finish(*id, token, answer).await?;
            if done { Ok(()) } else { Err(Error::NotOwner) }
        })
    }

    fn release<'a>(&'a self, id: &'a EntryId, token: Token) -> EntriesFuture<'a, ()> {
        EntriesFuture::new(async move {
            self.inner.attempts().end(token);
            if self.inner.release(*id, token).await? {
                Ok(())
            } else {
                Err(Error::NotOwner)
            }
        })
    }
}
