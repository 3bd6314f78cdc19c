//! Stage 7: work that leaves the process. A document service accepts conversion jobs and hands
//! each one to a second service, the consumer, through a transactional outbox.
//!
//! Until now every effect lived in the same database as its record. A conversion does not: it
//! happens in another process, with its own database, on the far side of a network. No
//! transaction spans the two, so this crate splits the work into steps that each keep the
//! lab's invariant on their own side:
//!
//! 1. **Accepting a job** commits the job (the Stage 5 ledger's effect and record) and its
//!    outgoing event in one transaction ([`sqlite::accept`]): the event exists exactly when the
//!    job does.
//! 2. **The dispatcher** ([`dispatcher`]) claims due events and delivers each to the consumer
//!    with the Stage 3 retry client, the event id as the operation key, and marks it delivered
//!    only once the consumer has acknowledged it ([`deliver`]): *at least once*.
//! 3. **The consumer** (`retrykey-converter`) converts at most once per event id, its record
//!    committing with its effect: at least once plus dedup is *exactly one effect*.
//! 4. **Reconciliation** (`retrykey-reconcile`, which reads both databases) shows an operator
//!    what is still uncertain; the two idempotent actions it offers, re-drive an event or mark
//!    it failed with a reason, are this crate's ([`action`]).
//!
//! # Reading order
//!
//! 1. [`event`] and [`accepted`]: what an event is, and what accepting a job answers.
//! 2. [`sqlite::accept`]: the job and its event in one transaction; [`sqlite::events`]: the
//!    outbox's statements (claim, the fenced settling writes); [`sqlite`]: the file.
//! 3. [`deliver`]: send first, mark second, with the steps of [`courier`]; then
//!    [`dispatcher`], the loop around it.
//! 4. [`store`]: the one interface both backends offer, async; [`pg`]: the same on
//!    PostgreSQL; [`backend`]: the one a `--db` flag names.
//! 5. [`action`]: the operator's actions.
//! 6. `bin/documents.rs` and `bin/dispatcher.rs`: the programs (the consumer's server,
//!    `converter`, is `retrykey-converter`'s; `reconcile` is `retrykey-reconcile`'s);
//!    `retrykey_server::signalled`: when they stop; [`output`]: what they print.
//!
//! # Example
//!
//! ```
//! use retrykey::{Key, Request};
//! use retrykey_outbox::{DocumentsOptions, EventState, SqliteOutbox};
//!
//! let path = std::env::temp_dir().join(format!("retrykey-outbox-doc-{}.sqlite", std::process::id()));
//! # retrykey_durable::sqlite::remove_files(&path);
//! let outbox = SqliteOutbox::open(&path, DocumentsOptions::default())?;
//! let key = Key::new("job-1")?;
//! let job = Request::new("report.docx", 7)?;
//!
//! let first = outbox.accept(&key, &job)?;   // the job and its event commit together
//! let retry = outbox.accept(&key, &job)?;   // the retry finds the job's record
//! assert_eq!(first.event, retry.event);
//! assert!(retry.receipt.replayed);
//! let events = outbox.events()?;
//! assert_eq!(events.len(), 1);                 // one job, one event
//! assert_eq!(events[0].state, EventState::Pending);
//! # drop(outbox);
//! # retrykey_durable::sqlite::remove_files(&path);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod accepted;
pub mod action;
pub mod backend;
pub mod courier;
pub mod crash;
pub mod deliver;
pub mod dispatcher;
mod error;
pub mod event;
mod options;
pub mod output;
pub mod pg;
pub mod sqlite;
pub mod store;

pub use accepted::{Accepted, NewEvent};
pub use action::{Acted, check_reason};
pub use error::{ActionError, Error};
pub use event::{Claimed, Event, EventId, EventRow, EventState};
pub use options::{
    DEFAULT_MAX_JOBS, DEFAULT_MAX_UNITS, DEFAULT_SCHEMA, DEFAULT_SCOPE, DocumentsOptions, Marks,
};
pub use pg::PgOutbox;
pub use sqlite::SqliteOutbox;
pub use store::OutboxStore;
