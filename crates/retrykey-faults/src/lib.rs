//! What the fault runs share: keyed clients that retry until each key has a definitive answer,
//! the identities they hold a run to, the table they print, and the real processes they drive.
//!
//! `pg-faults` restarts, severs and cuts a PostgreSQL server of its own under `payments` and
//! the durable ledger; `disk-full` fills a small filesystem under their SQLite files. Both run
//! a [`burst`] of keyed requests while the fault happens, and judge it with a [`table::FaultRow`].
//!
//! # Reading order
//!
//! 1. `burst.rs`: what a run drives while the fault happens: clients that retry each key with the
//!    same key until its answer is definitive, every request under a deadline of its own.
//! 2. `table.rs`: what a fault must not break (effects equal keys, every replay equals its first
//!    answer), one row per scenario.
//! 3. `http.rs` and `lines.rs`: the two services a burst talks to: `payments` over real TCP, and
//!    the durable ledger as `crash-server` processes speaking lines.
//! 4. `process.rs`: the real processes a run starts, each stopped by its own id, and the
//!    watchdog that ends a run that outlives its cap.
//! 5. `own_pg.rs` and `tmpfs.rs`: the ground a fault is made on: a PostgreSQL server of the
//!    run's own, and a small filesystem that can be filled (with the probes that decide a skip).
//! 6. `bin/pg-faults.rs` and `bin/disk-full.rs`: the two runs, each a list of scenarios.

pub mod burst;
pub mod http;
pub mod lines;
pub mod own_pg;
pub mod process;
pub mod table;
pub mod tmpfs;
