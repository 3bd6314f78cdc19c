//! Crash points: named places in each apply transaction where a test can kill the process.
//!
//! Each backend's transaction calls [`Hooks::at`] at four points. With the `failpoints`
//! feature (off by default; retrykey-durable-checks turns it on) every point is also a `fail`
//! crate failpoint of the same name: a process that configures `retrykey_crashpoints::scenario`
//! and runs with, say, `FAILPOINTS=after-effect=return` aborts there (`std::process::abort`, no
//! clean-up, no unwinding). Without the feature, the failpoints compile to nothing.
//!
//! An in-process hook can be set as well; `retrykey-durable-checks` uses it to panic at a point
//! (the same effect on the database as a crash: the open transaction never commits) or to cut a
//! connection. This is the seam the checks use, not part of the ledger's API.

use retrykey_crashpoints::{PointHooks, crash_points};

crash_points! {
    /// A place in the apply transaction, named after what has just happened.
    pub enum Point {
        /// Nothing has been written yet; the effect comes next. (SQLite has checked the key and
        /// the limits by now. PostgreSQL sends the lookup and the limits with the effect, in one
        /// round trip, so every apply passes here, a replay too; a replay then writes nothing.)
        BeforeEffect = "before-effect",
        /// The total has been changed; the record is not written yet.
        AfterEffect = "after-effect",
        /// The record has been written; the transaction has not committed yet.
        AfterRecord = "after-record",
        /// The transaction has committed; the caller has not received the receipt yet.
        AfterCommit = "after-commit",
    }
}

/// What runs at each crash point of the apply transaction.
pub type Hooks = PointHooks<Point>;
