//! The crash scenarios on SQLite, one `crash::<point>` test per point: the ledger panics at the
//! point (for the database the same as an abort: the open transaction never commits), is
//! opened again on the same file, and the retry with the same key must apply exactly once.
//! `retrykey-durable-checks` runs the same scenarios against a real, aborted process.

use retrykey_durable_checks::crash::harness::InProcess;
use retrykey_durable_checks::crash::server::{Backend, open_correct};

retrykey_durable_checks::crash_suite!(InProcess::new(Backend::fresh_sqlite(), open_correct));
