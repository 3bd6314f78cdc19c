//! The consumer's database, whichever backend holds it.
//!
//! The plain calls block the calling thread (SQLite works in place; PostgreSQL drives its
//! connection on a small runtime of its own): from async code, call it in
//! `tokio::task::spawn_blocking`. The `_async` calls, which [`service`](crate::service) uses,
//! await PostgreSQL on the caller's runtime and move only SQLite to a blocking thread.

use std::path::Path;
use std::sync::Arc;

use crate::pg::PgConverter;
use crate::rows::{ConversionRow, Converted, ProcessedRow};
use crate::sqlite::SqliteConverter;
use crate::steps::{ConvertSteps, StandardConvert};
use retrykey_wire::ConversionRequest;

use crate::Error;

/// The consumer's two tables, in SQLite or PostgreSQL.
#[derive(Debug)]
pub struct ConverterDb {
    backend: Backend,
}

#[derive(Debug)]
enum Backend {
    Sqlite(SqliteConverter),
    Postgres(PgConverter),
}

impl ConverterDb {
    /// Opens (or creates) the SQLite file at `path`.
    pub fn open_sqlite(path: &Path) -> Result<Self, Error> {
        Self::open_sqlite_with_steps(path, &StandardConvert)
    }

    /// The same, with the dedup transaction a lab under `labs/` replaces.
    #[doc(hidden)]
    pub fn open_sqlite_with_steps(
        path: &Path,
        steps: &'static dyn ConvertSteps,
    ) -> Result<Self, Error> {
        Ok(Self {
            backend: Backend::Sqlite(SqliteConverter::open_with_steps(path, steps)?),
        })
    }

    /// Connects to PostgreSQL at `url`, with the tables in `schema` (both created if missing).
    /// Blocks; do not call it on an async worker thread.
    pub fn connect_postgres(url: &str, schema: &str) -> Result<Self, Error> {
        Ok(Self {
            backend: Backend::Postgres(PgConverter::connect(url, schema)?),
        })
    }

    /// Converts `request` at most once: the first delivery of its event writes the conversion
    /// and its record in one transaction; every later one reads the record and writes nothing.
    pub fn convert(&self, request: &ConversionRequest) -> Result<Converted, Error> {
        match &self.backend {
            Backend::Sqlite(db) => db.convert(request),
            Backend::Postgres(db) => db.convert(request),
        }
    }

    /// [`ConverterDb::convert`] for async code: PostgreSQL awaits its connection on the
    /// caller's runtime, with no thread blocked per delivery; SQLite, which works in place, runs
    /// on a blocking thread.
    pub async fn convert_async(
        self: &Arc<Self>,
        request: &ConversionRequest,
    ) -> Result<Converted, Error> {
        match &self.backend {
            Backend::Postgres(db) => db.convert_async(request).await,
            Backend::Sqlite(_) => {
                let (db, request) = (Arc::clone(self), request.clone());
                blocking(move || db.convert(&request)).await
            }
        }
    }

    /// How many conversions are stored.
    pub fn count(&self) -> Result<u64, Error> {
        match &self.backend {
            Backend::Sqlite(db) => db.count(),
            Backend::Postgres(db) => db.count(),
        }
    }

    /// [`ConverterDb::count`] for async code, as [`ConverterDb::convert_async`].
    pub async fn count_async(self: &Arc<Self>) -> Result<u64, Error> {
        match &self.backend {
            Backend::Postgres(db) => db.count_async().await,
            Backend::Sqlite(_) => {
                let db = Arc::clone(self);
                blocking(move || db.count()).await
            }
        }
    }

    /// Every stored conversion, by number.
    pub fn list(&self) -> Result<Vec<ConversionRow>, Error> {
        match &self.backend {
            Backend::Sqlite(db) => db.list(),
            Backend::Postgres(db) => db.list(),
        }
    }

    /// The `processed` records of those of `events` that were converted, by event id: how an
    /// operator finds conversions whose acknowledgement the outbox never recorded.
    pub fn processed(&self, events: &[String]) -> Result<Vec<ProcessedRow>, Error> {
        match &self.backend {
            Backend::Sqlite(db) => db.processed(events),
            Backend::Postgres(db) => db.processed(events),
        }
    }
}

/// Runs a blocking call on a blocking thread.
async fn blocking<T: Send + 'static>(
    call: impl FnOnce() -> Result<T, Error> + Send + 'static,
) -> Result<T, Error> {
    tokio::task::spawn_blocking(call)
        .await
        .map_err(|error| Error::Interrupted(error.to_string()))?
}
