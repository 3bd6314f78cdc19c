//! Named points on a keyed request's path where a test stops a replica, to kill it there.
//!
//! With the `failpoints` feature (off by default; the crash tests turn it on) each point is a
//! `fail` crate failpoint of the same name. `payments --pause-at <point>` makes the server print
//! `paused at <point>` and stop there (`retrykey_crashpoints::pause_at`), and the crash tests
//! then send it SIGKILL. Without the feature the points compile to nothing and `--pause-at` is
//! refused.

use retrykey_crashpoints::crash_points;

crash_points! {
    /// A place on the path of one keyed `POST /payments`, named after what has just happened.
    pub enum Point {
        /// The key is reserved (committed); the handler has not started.
        Reserved = "reserved",
        /// The handler is running; nothing is charged yet.
        Handler = "handler",
        /// Nothing has committed: the handler's rows (the charge) are written inside the
        /// transaction, and the key's answer is not.
        Charged = "charged",
        /// The handler's rows and the answer have committed; the client has not been answered.
        Committed = "committed",
    }
}
