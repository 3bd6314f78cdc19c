//! The requests a service is running, so that a stop can wait for work that outlives its
//! connection: a keyed request whose client left runs on by itself (the layer's
//! run-to-completion).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Instant;

use tokio::sync::Notify;
use tower_service::Service;

/// The requests a service is running, counted until each one's future ends or is dropped.
///
/// A keyed request whose client left keeps running on a task of its own (the layer's
/// run-to-completion), beyond its connection: wrapped in [`Running::track`], the inner service
/// lets a stop wait for that work too, within the same deadline.
///
/// ```
/// use std::time::Instant;
/// use retrykey_server::Running;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let running = Running::default();
/// assert_eq!(running.settle_by(Instant::now()).await, 0); // nothing runs: settled at once
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct Running(Arc<RunningCount>);

#[derive(Debug, Default)]
struct RunningCount {
    count: AtomicUsize,
    settled: Notify,
}

impl Running {
    /// `inner`, with every call counted here until its future ends or is dropped.
    pub fn track<S>(&self, inner: S) -> Tracked<S> {
        Tracked {
            inner,
            running: self.clone(),
        }
    }

    /// Requests running now.
    pub fn count(&self) -> usize {
        self.0.count.load(Ordering::SeqCst)
    }

    /// Waits until nothing is running or `deadline` has passed; returns how many still run.
    pub async fn settle_by(&self, deadline: Instant) -> usize {
        let settle = async {
            loop {
                // Registered before the count is read, so that a last request ending in
                // between still wakes this.
                let settled = self.0.settled.notified();
                tokio::pin!(settled);
                settled.as_mut().enable();
                if self.count() == 0 {
                    return;
                }
                settled.await;
            }
        };
        let _ = tokio::time::timeout_at(deadline.into(), settle).await;
        self.count()
    }
}

/// A service whose calls are counted by a [`Running`].
#[derive(Debug, Clone)]
pub struct Tracked<S> {
    inner: S,
    running: Running,
}

/// One counted call: uncounted when dropped, with its future.
struct Counted(Running);

impl Drop for Counted {
    fn drop(&mut self) {
        if self.0.0.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.0.settled.notify_waiters();
        }
    }
}

impl<S, R> Service<R> for Tracked<S>
where
    S: Service<R>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: R) -> Self::Future {
        self.running.0.count.fetch_add(1, Ordering::SeqCst);
        let counted = Counted(self.running.clone());
        let future = self.inner.call(request);
        Box::pin(async move {
            let _counted = counted;
            future.await
        })
    }
}
