//! The point on a delivery's path where a test stops the dispatcher, to kill it there.
//!
//! With the `failpoints` feature (on by default in this lab) the point is a `fail` crate
//! failpoint of the same name. `dispatcher --pause-at sent` makes the process print
//! `paused at sent` and stop there, and the fault tests then send it SIGKILL: the consumer has
//! the event and has answered, and the outbox still says "pending", the case that makes
//! delivery *at least* once. The in-process checks set a hook instead, which panics there.

use std::fmt;

use retrykey_durable::crash::{CrashPoint, PointHooks};

/// What runs at the dispatcher's crash point.
pub type Hooks = PointHooks<Point>;

/// A place on the path of one delivery, named after what has just happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Point {
    /// Between the two steps of a delivery: in the correct order, the consumer has
    /// acknowledged the event and the outbox has not marked it delivered yet.
    Sent,
}

impl Point {
    /// Every point, in the order a delivery passes them.
    pub const ALL: [Point; 1] = [Point::Sent];

    /// The failpoint name, also used by `--pause-at`.
    pub fn name(self) -> &'static str {
        match self {
            Point::Sent => "sent",
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

impl CrashPoint for Point {
    fn name(self) -> &'static str {
        Point::name(self)
    }
}
