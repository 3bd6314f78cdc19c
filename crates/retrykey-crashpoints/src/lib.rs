//! Crash points: named places in a stage's code where a test can stop or kill the process.
//!
//! Every stage that shows a crash has its own vocabulary of points (the durable ledger's
//! `after-effect`, a replica's `charged`, the dispatcher's `sent`), but the same machinery: each
//! point is a failpoint of the `fail` crate with the point's name, plus an optional in-process
//! hook that the checks set to panic or cut a connection there. This crate holds that machinery
//! once; each stage declares its points with [`crash_points!`].
//!
//! The failpoints are compiled in only with the `failpoints` feature, which is off by default:
//! a product build has no crash points at all. A process that *asks* for a point in a build
//! without them ([`scenario`] with `FAILPOINTS` set, or [`pause_at`]) gets
//! [`Error::NotCompiled`] instead of running on as if the point had never been reached, so a
//! wrongly built binary cannot pass a crash test by never crashing.
//!
//! # Reading order
//!
//! 1. [`point`]: the [`CrashPoint`] trait and the [`crash_points!`] macro that declares a
//!    crate's points.
//! 2. [`hooks`]: [`PointHooks`], what runs at a point, and [`at`], the process-wide part alone.
//! 3. [`knobs`]: how a process is told to stop at a point: [`scenario`] (abort, from
//!    `FAILPOINTS`) and [`pause_at`] (announce and wait for a SIGKILL).
//!
//! # Example
//!
//! ```
//! use std::sync::{Arc, Mutex};
//!
//! use retrykey_crashpoints::{PointHooks, crash_points};
//!
//! crash_points! {
//!     /// A place on the path of one upload.
//!     pub enum Point {
//!         /// The file is stored; its index entry is not.
//!         Stored = "stored",
//!         /// Both have committed; the client has not been answered.
//!         Committed = "committed",
//!     }
//! }
//!
//! let passed = Arc::new(Mutex::new(Vec::new()));
//! let seen = Arc::clone(&passed);
//! let hooks = PointHooks::with(move |point: Point| seen.lock().unwrap().push(point.name()));
//! for point in Point::ALL {
//!     hooks.at(point);
//! }
//! assert_eq!(*passed.lock().unwrap(), ["stored", "committed"]);
//! assert_eq!(Point::from_name("committed"), Some(Point::Committed));
//! assert_eq!(Point::Stored.to_string(), "stored");
//! ```

pub mod hooks;
pub mod knobs;
pub mod point;

pub use hooks::{PointHooks, at};
pub use knobs::{Error, Scenario, pause_at, scenario};
pub use point::CrashPoint;

/// Whether this build has the failpoints compiled in (the `failpoints` feature).
pub const COMPILED: bool = cfg!(feature = "failpoints");
