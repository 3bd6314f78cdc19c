//! What the fault runs share: keyed clients that retry until each key has a definitive answer,
//! the identities they hold a run to, the table they print, and the real processes they drive.
//!
//! `pg-faults` restarts, severs and cuts a PostgreSQL server of its own under `payments` and
//! the durable ledger; `disk-full` fills a small filesystem under their SQLite files. Both run
//! a [`burst`] of keyed requests while the fault happens, and judge it with a [`table::FaultRow`].

pub mod burst;
pub mod http;
pub mod lines;
pub mod own_pg;
pub mod process;
pub mod table;
pub mod tmpfs;
