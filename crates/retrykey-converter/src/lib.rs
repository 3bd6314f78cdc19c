//! The transactional outbox's consumer: a document conversion done at most once per event.
//!
//! The outbox's dispatcher delivers each event *at least once*: it cannot tell a lost delivery
//! from a lost acknowledgement, so it sends again until it hears back. This service turns that
//! into *at most once* for its effect. The event id is its operation key, and the record that the
//! event was processed (`processed`) commits in the same transaction as the conversion itself
//! (`conversions`), so a redelivery finds the record and gets the original answer instead of a
//! second conversion.
//!
//! # Reading order
//!
//! 1. `retrykey-wire`: what the dispatcher sends and what it gets back.
//! 2. [`convert`]: the whole dedup transaction on SQLite, in one function; [`sqlite`] is the
//!    file and connection around it.
//! 3. [`pg`]: the same transaction on PostgreSQL, where the primary key of the record picks
//!    the one delivery that converts.
//! 4. [`rows`]: what either backend answers with; [`db`]: [`ConverterDb`], the database a
//!    consumer opens, on either backend; [`steps`]: the seam a lab plugs its transaction into.
//! 5. [`service`] and [`problem`]: the HTTP endpoint and its refusals; [`crash`]: the point
//!    the fault tests stop it at.
//!
//! The server, `converter` (`bin/converter.rs`), is built here: the outbox, its producer, does
//! not build it, and its fault tests find it in the cargo target folder.
//!
//! # Example
//!
//! ```
//! use retrykey_converter::ConverterDb;
//! use retrykey_wire::ConversionRequest;
//!
//! let path = std::env::temp_dir().join(format!("retrykey-converter-doc-{}.sqlite", std::process::id()));
//! # retrykey_durable::sqlite::remove_files(&path);
//! let db = ConverterDb::open_sqlite(&path)?;
//! let request = ConversionRequest { event: "evt-1".into(), job: "report.docx".into(), units: 3 };
//!
//! let first = db.convert(&request)?;
//! let redelivery = db.convert(&request)?;
//! assert_eq!((first.conversion, first.replayed), (1, false));
//! assert_eq!((redelivery.conversion, redelivery.replayed), (1, true));
//! assert_eq!(db.count()?, 1);
//! # drop(db);
//! # retrykey_durable::sqlite::remove_files(&path);
//! # Ok::<(), retrykey_converter::Error>(())
//! ```

pub mod convert;
pub mod crash;
pub mod db;
mod error;
pub mod pg;
pub mod problem;
pub mod rows;
pub mod service;
pub mod sqlite;
pub mod steps;

pub use db::ConverterDb;
pub use error::Error;
pub use rows::{ConversionRow, Converted, ProcessedRow};
pub use steps::{ConvertSteps, StandardConvert};
