//! The point on a delivery's path where a test stops the consumer, to kill it there.
//!
//! With the `failpoints` feature (off by default; the fault tests turn it on) the point is a
//! `fail` crate failpoint of the same name. `converter --pause-at converted` makes the server
//! print `paused at converted` and stop there, and the fault tests then send it SIGKILL: the
//! conversion has committed and the dispatcher has heard nothing, the case a redelivery must
//! answer without converting again. Without the feature the point compiles to nothing. The
//! in-process checks set a hook instead (`Hooks::with`), which stands for the crash by
//! panicking there: the delivery's connection closes without an answer.

use retrykey_crashpoints::{PointHooks, crash_points};

/// What runs at the consumer's crash point.
pub type Hooks = PointHooks<Point>;

crash_points! {
    /// A place on the path of one `POST /conversions`, named after what has just happened.
    pub enum Point {
        /// The conversion and its `processed` record have committed; the dispatcher has not
        /// been answered.
        Converted = "converted",
    }
}
