//! The point on a delivery's path where a test stops the dispatcher, to kill it there.
//!
//! With the `failpoints` feature (off by default; the fault tests turn it on) the point is a
//! `fail` crate failpoint of the same name. `dispatcher --pause-at sent` makes the process print
//! `paused at sent` and stop there, and the fault tests then send it SIGKILL: the consumer has
//! the event and has answered, and the outbox still says "pending", the case that makes
//! delivery *at least* once. The in-process checks set a hook instead, which panics there.

use retrykey_crashpoints::{PointHooks, crash_points};

/// What runs at the dispatcher's crash point.
pub type Hooks = PointHooks<Point>;

crash_points! {
    /// A place on the path of one delivery, named after what has just happened.
    pub enum Point {
        /// Between the two steps of a delivery: in the correct order, the consumer has
        /// acknowledged the event and the outbox has not marked it delivered yet.
        Sent = "sent",
    }
}
