//! Stage 7: the operator's reconciliation. What is still uncertain between the outbox and its
//! consumer, and the two idempotent actions that settle it.
//!
//! The outbox (the producer) and the converter (its consumer) are two services that talk over
//! HTTP and link none of each other's code. Reconciliation is the one place that reads both
//! databases: it lists the events the consumer converted but the outbox never heard
//! acknowledged. It is an operator's tool run beside both databases, not part of the delivery
//! path, so it sits above the two, in a crate of its own.
//!
//! # Reading order
//!
//! 1. [`report`](mod@report): the three lists, and the mark that the consumer's records can refuse.
//! 2. [`text`](mod@text): the same for a person.
//! 3. `bin/reconcile.rs`: the program.
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//! use retrykey::{Key, Request};
//! use retrykey_outbox::{DocumentsOptions, SqliteOutbox};
//!
//! let path = std::env::temp_dir().join(format!("retrykey-reconcile-doc-{}.sqlite", std::process::id()));
//! # let _ = std::fs::remove_file(&path);
//! let outbox = SqliteOutbox::open(&path, DocumentsOptions::default())?;
//! outbox.accept(&Key::new("job-1")?, &Request::new("report.docx", 7)?)?;
//!
//! // Nobody delivered it: a job accepted at least 0 ms ago is listed as undelivered.
//! let report = retrykey_reconcile::report(&outbox, None, Duration::ZERO)?;
//! assert_eq!(report.undelivered.len(), 1);
//! assert!(report.converted_not_acknowledged.is_none()); // no consumer's database given
//! # drop(outbox);
//! # for suffix in ["", "-wal", "-shm"] { let _ = std::fs::remove_file(format!("{}{suffix}", path.display())); }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod report;
pub mod text;

pub use report::{DEFAULT_UNDELIVERED_AFTER, MAX_LISTED, Report, Uncertain, mark_failed, report};
pub use text::{acted_text, text};

/// Why the reconciliation could not read or act.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The outbox's database failed.
    #[error(transparent)]
    Outbox(#[from] retrykey_outbox::Error),
    /// The consumer's database failed.
    #[error("the consumer's database: {0}")]
    Consumer(#[from] retrykey_converter::Error),
}
