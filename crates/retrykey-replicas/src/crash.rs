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

/// Makes every request that reaches the failpoint `name` announce it on stdout
/// (`paused at <name>`) and then stop there for good: how `--pause-at` is built, in `payments`
/// and in the outbox's `dispatcher` and `converter`.
///
/// The announcement is the test's cue: once it is on stdout, the request is exactly at the
/// point, and a SIGKILL then shows what a crash there leaves behind.
pub fn pause_at(name: &'static str) -> Result<(), String> {
    fail::cfg_callback(name, move || {
        {
            use std::io::Write;
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "paused at {name}");
            let _ = stdout.flush();
        }
        // Some points run on an async worker thread: hand its other tasks to another worker,
        // so that the rest of the server (a count, other keys) still answers.
        tokio::task::block_in_place(|| {
            loop {
                std::thread::park(); // a spurious wake-up parks again
            }
        })
    })
    .map_err(|error| format!("cannot pause at {name}: {error}"))
}
