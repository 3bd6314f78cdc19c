//! What runs at a crash point: the process-wide failpoint, then an optional in-process hook.

use std::fmt;
use std::sync::Arc;

use crate::CrashPoint;

type Hook<P> = dyn Fn(P) + Send + Sync;

/// What runs at each crash point: the process-wide failpoints and an optional in-process hook.
///
/// The hook is how the checks crash a ledger in their own process: panicking there has the same
/// effect on a database as a crash (the open transaction never commits).
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
        at(point);
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

/// Passes `point` with no in-process hook: runs its failpoint if the process configured one.
///
/// A `return` action aborts the process there (`std::process::abort`: no unwinding, no
/// clean-up, no `ROLLBACK` sent); a callback (how [`pause_at`](crate::pause_at) stops a server)
/// runs and comes back. Without the `failpoints` feature this is nothing at all.
pub fn at<P: CrashPoint>(point: P) {
    #[cfg(feature = "failpoints")]
    fail::fail_point!(point.name(), |_| std::process::abort());
    #[cfg(not(feature = "failpoints"))]
    let _ = point;
}
