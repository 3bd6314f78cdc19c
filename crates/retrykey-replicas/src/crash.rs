//! Named points on a keyed request's path where a test stops a replica, to kill it there.
//!
//! With the `failpoints` feature (on by default in this lab) each point is a `fail` crate
//! failpoint of the same name. `payments --pause-at <point>` makes the server print
//! `paused at <point>` and stop there, and the crash tests then send it SIGKILL. Built with
//! `default-features = false`, the points compile to nothing.

use std::fmt;

/// A place on the path of one keyed `POST /payments`, named after what has just happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Point {
    /// The key is reserved (committed); the handler has not started.
    Reserved,
    /// The handler is running; nothing is charged yet.
    Handler,
    /// The charge is written inside the transaction; the key's answer is not, and nothing
    /// has committed.
    Charged,
    /// The charge and the answer have committed; the client has not been answered.
    Committed,
}

impl Point {
    /// Every point, in the order a request passes them.
    pub const ALL: [Point; 4] = [
        Point::Reserved,
        Point::Handler,
        Point::Charged,
        Point::Committed,
    ];

    /// The failpoint name, also used by `--pause-at` and in test names.
    pub fn name(self) -> &'static str {
        match self {
            Point::Reserved => "reserved",
            Point::Handler => "handler",
            Point::Charged => "charged",
            Point::Committed => "committed",
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

/// Passes `point`: a configured failpoint of that name runs here.
pub(crate) fn at(point: Point) {
    fail::fail_point!(point.name());
}
