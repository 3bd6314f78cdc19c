// Mirrored by labs/per-replica-memory: see labs/README.md before changing this file.
//! Which store a `payments` replica opens, from its `--store` flag.
//!
//! Replicas share an authority only when they open the same database: this is where that
//! choice is made, once per process.

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

use retrykey_http::payments::{MemoryPayments, PaymentLedger};
use retrykey_http::{Entries, Error, MemoryEntries};

use crate::{
    FenceSteps, PgEntries, PgPayments, SqliteEntries, SqlitePayments, StandardFence, StoreOptions,
};

/// Where a replica keeps its keys and its charges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreChoice {
    /// Process memory: one replica only.
    Memory,
    /// A SQLite file: every process on this machine that opens it.
    Sqlite(PathBuf),
    /// A PostgreSQL database, reached with this URL.
    Postgres(String),
}

impl StoreChoice {
    /// Parses a `--store` value; `postgres` takes its URL from `url` (`RETRYKEY_PG_URL`).
    pub fn parse(value: &str, url: Option<String>) -> Result<Self, StoreChoiceError> {
        match value {
            "memory" => Ok(Self::Memory),
            "postgres" => url
                .filter(|url| !url.is_empty())
                .map(Self::Postgres)
                .ok_or(StoreChoiceError::NoUrl),
            _ => match value.strip_prefix("sqlite:") {
                Some("") => Err(StoreChoiceError::NoPath),
                Some(path) => Ok(Self::Sqlite(PathBuf::from(path))),
                None => Err(StoreChoiceError::Unknown(value.to_owned())),
            },
        }
    }

    /// Opens the store and the payments ledger this choice names.
    pub async fn open(&self, options: StoreOptions) -> Result<Opened, Error> {
        self.open_with_steps(options, Arc::new(StandardFence)).await
    }

    /// The same, with the SQLite claim and fence a lab under `labs/` replaces.
    #[doc(hidden)]
    pub async fn open_with_steps(
        &self,
        options: StoreOptions,
        steps: Arc<dyn FenceSteps>,
    ) -> Result<Opened, Error> {
        Ok(match self {
            Self::Memory => Opened {
                store: Arc::new(MemoryEntries::new(options.limits)),
                ledger: Arc::new(MemoryPayments::default()),
            },
            Self::Sqlite(path) => {
                let store = SqliteEntries::open_with_steps(path, options, steps)?;
                Opened {
                    ledger: Arc::new(SqlitePayments::new(&store)),
                    store: Arc::new(store),
                }
            }
            Self::Postgres(url) => {
                let store = PgEntries::connect(url, options).await?;
                Opened {
                    ledger: Arc::new(PgPayments::new(&store)),
                    store: Arc::new(store),
                }
            }
        })
    }
}

/// Why a `--store` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreChoiceError {
    /// Not one of the three forms.
    #[error("expected memory, sqlite:PATH or postgres, got {0:?}")]
    Unknown(String),
    /// `sqlite:` with nothing after it.
    #[error("sqlite: needs a file path, as in sqlite:/tmp/keys.sqlite")]
    NoPath,
    /// `postgres` without `RETRYKEY_PG_URL`.
    #[error("postgres needs RETRYKEY_PG_URL, as in postgres://user:password@127.0.0.1:5432/db")]
    NoUrl,
}

impl FromStr for StoreChoice {
    type Err = StoreChoiceError;

    /// Parses a `--store` value, reading `RETRYKEY_PG_URL` for `postgres`.
    fn from_str(value: &str) -> Result<Self, Self::Err> {
        Self::parse(value, std::env::var("RETRYKEY_PG_URL").ok())
    }
}

/// A replica's store and payments ledger, opened on the same authority.
pub struct Opened {
    /// Where the layer keeps keys.
    pub store: Arc<dyn Entries>,
    /// Where the handler keeps charges.
    pub ledger: Arc<dyn PaymentLedger>,
}
