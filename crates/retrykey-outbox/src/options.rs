//! How the document service's database is opened: its ledger scope and limits, and its clock.

use std::time::Duration;

use retrykey::Limits;
use retrykey_durable::Durability;
use retrykey_durable::crash::Hooks;
use retrykey_program::Clock;

/// The schema the document service's tables live in on PostgreSQL unless told otherwise.
pub const DEFAULT_SCHEMA: &str = "retrykey_documents";

/// The ledger scope jobs are accepted in unless told otherwise.
pub const DEFAULT_SCOPE: &str = "documents";

/// Jobs the ledger remembers by default: far more than a class makes, and still a bound.
pub const DEFAULT_MAX_JOBS: usize = 1_000_000;

/// Units the ledger commits in all by default.
pub const DEFAULT_MAX_UNITS: u64 = 1_000_000_000_000;

/// How the mark that settles a delivered event commits on PostgreSQL.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Marks {
    /// The commit waits until the mark is on disk: once the dispatcher has seen it, a
    /// database crash cannot undo it. The default.
    #[default]
    Durable,
    /// The commit does not wait for the disk (`synchronous_commit = off` for the mark's
    /// transaction only): a crash of the database server may lose the marks of its last
    /// fraction of a second (up to three times `wal_writer_delay`, 600 ms by default). Those
    /// events are pending again after the restart and are delivered once more, which the
    /// consumer answers from its record: the redelivery window widens, no event is lost and
    /// none is converted twice. A crash of the dispatcher loses nothing. Refused on SQLite.
    Relaxed,
}

impl Marks {
    /// The setting a flag names: `durable` or `relaxed`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "durable" => Some(Self::Durable),
            "relaxed" => Some(Self::Relaxed),
            _ => None,
        }
    }
}

/// Settings of the document service's database, on either backend.
#[derive(Debug, Clone)]
pub struct DocumentsOptions {
    /// The ledger scope (tenant) jobs are accepted in; job numbers count per scope.
    pub scope: String,
    /// The ledger's bounds on jobs remembered and units committed.
    pub limits: Limits,
    /// How long a job's record is kept, so that a retry of its key replays it; the sweep then
    /// deletes the record, and the job's event with it once the event is settled.
    pub retention: Duration,
    /// SQLite only: the commit setting.
    pub durability: Durability,
    /// PostgreSQL only: the schema that holds the ledger and the outbox.
    pub pg_schema: String,
    /// PostgreSQL only: connections for accepting jobs and the operator's reads (the ledger and
    /// the outbox share them), and as many for the dispatcher's statements; one per job
    /// accepted (or event settled) at once. A command that does one thing needs one.
    pub pg_connections: usize,
    /// PostgreSQL only: how a delivery's mark commits. [`Marks::Durable`] unless a
    /// dispatcher chooses otherwise.
    pub marks: Marks,
    /// The clock events' times, due times and leases are read from.
    pub clock: Clock,
    /// Where the ledger's crash points call out: a seam for the checks.
    #[doc(hidden)]
    pub hooks: Hooks,
}

impl Default for DocumentsOptions {
    fn default() -> Self {
        Self {
            scope: DEFAULT_SCOPE.to_owned(),
            limits: Limits {
                max_records: DEFAULT_MAX_JOBS,
                max_units: DEFAULT_MAX_UNITS,
            },
            retention: retrykey_durable::options::DEFAULT_RETENTION,
            durability: Durability::Full,
            pg_schema: DEFAULT_SCHEMA.to_owned(),
            pg_connections: 8,
            marks: Marks::Durable,
            clock: Clock::system(),
            hooks: Hooks::none(),
        }
    }
}

impl DocumentsOptions {
    /// The ledger's options: the same scope, limits, durability, schema and hooks.
    pub(crate) fn ledger(&self) -> retrykey_durable::LedgerOptions {
        retrykey_durable::LedgerOptions {
            scope: self.scope.clone(),
            limits: self.limits,
            retention: self.retention,
            durability: self.durability,
            pg_schema: self.pg_schema.clone(),
            pg_connections: self.pg_connections,
            pg_application_name: "retrykey-documents".to_owned(),
            hooks: self.hooks.clone(),
        }
    }
}
