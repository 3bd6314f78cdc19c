//! The point on a delivery's path where a test stops the consumer, to kill it there.
//!
//! With the `failpoints` feature (on by default in this lab) the point is a `fail` crate
//! failpoint of the same name. `converter --pause-at converted` makes the server print
//! `paused at converted` and stop there, and the fault tests then send it SIGKILL: the
//! conversion has committed and the dispatcher has heard nothing, the case a redelivery must
//! answer without converting again. Built with `default-features = false`, the point compiles
//! to nothing. The in-process checks set a hook instead (`Hooks::with`), which stands for the
//! crash by panicking there: the delivery's connection closes without an answer.

use std::fmt;

use retrykey_durable::crash::{CrashPoint, PointHooks};

/// What runs at the consumer's crash point.
pub type Hooks = PointHooks<Point>;

/// A place on the path of one `POST /conversions`, named after what has just happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Point {
    /// The conversion and its `processed` record have committed; the dispatcher has not been
    /// answered.
    Converted,
}

impl Point {
    /// Every point, in the order a delivery passes them.
    pub const ALL: [Point; 1] = [Point::Converted];

    /// The failpoint name, also used by `--pause-at`.
    pub fn name(self) -> &'static str {
        match self {
            Point::Converted => "converted",
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
