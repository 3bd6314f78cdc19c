//! Crash points: named places in each apply transaction where a test can kill the process.
//!
//! Each backend's transaction calls [`Hooks::at`] at four points. With the `failpoints`
//! feature (on by default in this lab) every point is also a `fail` crate failpoint of the same
//! name: a process that calls `fail::FailScenario::setup()` and runs with, say,
//! `FAILPOINTS=after-effect=return` aborts there (`std::process::abort`, no clean-up, no
//! unwinding). Built with `default-features = false`, the failpoints compile to nothing.
//!
//! An in-process hook can be set as well; `retrykey-durable-checks` uses it to panic at a point
//! (the same effect on the database as a crash: the open transaction never commits) or to cut a
//! connection. This is the seam the checks use, not part of the ledger's API.

use std::fmt;
use std::sync::Arc;

/// A place in the apply transaction, named after what has just happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Point {
    /// Nothing has been written yet; the effect comes next. (SQLite has checked the key and
    /// the limits by now. PostgreSQL sends the lookup and the limits with the effect, in one
    /// round trip, so every apply passes here, a replay too; a replay then writes nothing.)
    BeforeEffect,
    /// The total has been changed; the record is not written yet.
    AfterEffect,
    /// The record has been written; the transaction has not committed yet.
    AfterRecord,
    /// The transaction has committed; the caller has not received the receipt yet.
    AfterCommit,
}

impl Point {
    /// Every point, in the order a transaction passes them.
    pub const ALL: [Point; 4] = [
        Point::BeforeEffect,
        Point::AfterEffect,
        Point::AfterRecord,
        Point::AfterCommit,
    ];

    /// The failpoint name, also used in tables and test names.
    pub fn name(self) -> &'static str {
        match self {
            Point::BeforeEffect => "before-effect",
            Point::AfterEffect => "after-effect",
            Point::AfterRecord => "after-record",
            Point::AfterCommit => "after-commit",
        }
    }

    /// The point with this name.
    pub fn from_name(name: &str) -> Option<Point> {
        Point::ALL.into_iter().find(|point| point.name() == name)
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A named place where a process can be stopped: this crate's [`Point`]s, and the points of the
/// later stages' services, which share [`PointHooks`].
pub trait CrashPoint: Copy + fmt::Display + Send + Sync + 'static {
    /// The failpoint name.
    fn name(self) -> &'static str;
}

impl CrashPoint for Point {
    fn name(self) -> &'static str {
        Point::name(self)
    }
}

type Hook<P> = dyn Fn(P) + Send + Sync;

/// What runs at each crash point of the apply transaction.
pub type Hooks = PointHooks<Point>;

/// What runs at each crash point: the process-wide failpoints and an optional in-process hook.
pub struct PointHooks<P> {
    hook: Option<Arc<Hook<P>>>,
}

impl<P: CrashPoint> PointHooks<P> {
    /// Only the failpoints (which do nothing unless the process configured them).
    pub fn none() -> Self {
        Self { hook: None }
    }

    /// Also calls `hook` at every point, on the thread that passes it.
    pub fn with(hook: impl Fn(P) + Send + Sync + 'static) -> Self {
        Self {
            hook: Some(Arc::new(hook)),
        }
    }

    /// Called by the code at `point`.
    pub fn at(&self, point: P) {
        failpoint(point.name());
        if let Some(hook) = &self.hook {
            hook(point);
        }
    }
}

impl<P> Clone for PointHooks<P> {
    fn clone(&self) -> Self {
        Self {
            hook: self.hook.clone(),
        }
    }
}

impl<P: CrashPoint> Default for PointHooks<P> {
    fn default() -> Self {
        Self::none()
    }
}

impl<P> fmt::Debug for PointHooks<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hooks")
            .field("hook", &self.hook.is_some())
            .finish()
    }
}

/// Runs the failpoint `name` if the process configured it: a `return` action aborts the process
/// there; a callback (`fail::cfg_callback`, how a server pauses at a point) runs and comes back.
fn failpoint(name: &str) {
    #[cfg(feature = "failpoints")]
    fail::fail_point!(name, |_| std::process::abort());
    #[cfg(not(feature = "failpoints"))]
    let _ = name;
}
