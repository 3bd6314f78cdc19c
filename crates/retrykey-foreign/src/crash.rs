//! Named points on a checkout's path where a test stops the service, to crash it there.
//!
//! With the `failpoints` feature (off by default) each point is a `fail` crate failpoint of the
//! same name, which a crash test turns into an abort or a pause before SIGKILL. The in-process
//! checks set a hook instead: a panic at the point, or a pause that outlives the lease. The
//! names differ from stage 6's (`reserved`, `handler`, `charged`, `committed`), which the same
//! process passes inside the store's `commit`: a failpoint is one name for the whole process.

use retrykey_crashpoints::{PointHooks, crash_points};

/// What runs at the checkout's crash points.
pub type Hooks = PointHooks<Point>;

crash_points! {
    /// A place on the path of one checkout, named after what has just happened.
    pub enum Point {
        /// Phase 1 committed, or found the row an earlier attempt left: the order exists; this
        /// attempt has not called the provider yet.
        OrderCreated = "order-created",
        /// The provider answered; the phase that records its charge has not committed.
        Called = "provider-answered",
        /// Phase 2 committed: the charge is recorded; the order is not confirmed.
        Charged = "charge-recorded",
        /// The last phase committed: the order is paid and the key's answer stored; the client
        /// has not been answered.
        Confirmed = "order-confirmed",
    }
}
