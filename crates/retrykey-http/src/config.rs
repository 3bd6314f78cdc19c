//! The layer's settings and the seam where the request-handling core plugs in: what the layer
//! hands an [`Engine`] for each request ([`Config`], the inner service as [`Next`]).
//!
//! Both the layer and the engine read this file, and it reads neither: the layer builds a
//! `Config` and calls the engine, the engine answers with what the `Config` says.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use http::request::Parts;
use http::{Method, Request, Response};

use crate::body::Body;
use crate::{Entries, Scope};

/// A boxed, sendable future (the engine and the inner service meet through these).
#[doc(hidden)]
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// The request-handling core: everything the layer does with one request.
///
/// [`StandardEngine`](crate::StandardEngine) is the correct one. The seam exists so each broken variant under `labs/`
/// can run the same layer with its one changed file plugged in; it is not part of the API.
#[doc(hidden)]
pub trait Engine: Send + Sync + 'static {
    /// Answers one request, calling `next` at most once.
    fn handle(
        &self,
        config: Arc<Config>,
        request: Request<Body>,
        next: Next,
    ) -> BoxFuture<Response<Body>>;
}

/// How long a duplicate waits for the first attempt by default: longer than a database store's
/// default lease (10 s), so that a duplicate whose first attempt died outlives its lease, takes
/// the key over and answers in the same request.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(15);

/// What a duplicate gets while the first request with its key is still running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InFlight {
    /// Wait for the first and receive its answer; after the deadline, 503 with `Retry-After`.
    Wait(Duration),
    /// Answer 409 at once (the IETF draft's behaviour).
    Reject,
}

pub(crate) type PartsPredicate = Arc<dyn Fn(&Parts) -> bool + Send + Sync>;
pub(crate) type ScopeFn = Arc<dyn Fn(&Parts) -> Scope + Send + Sync>;

/// The layer's settings, shared by every request and read by the request-handling core.
pub struct Config {
    pub(crate) methods: Vec<Method>,
    pub(crate) require_key: Option<PartsPredicate>,
    pub(crate) scope: ScopeFn,
    pub(crate) max_body_bytes: usize,
    pub(crate) max_stored_body_bytes: usize,
    pub(crate) in_flight: InFlight,
    pub(crate) problem_base: Arc<str>,
    pub(crate) store: Arc<dyn Entries>,
    pub(crate) engine: Arc<dyn Engine>,
}

impl Config {
    /// What the `type` of the layer's problem answers starts with.
    pub fn problem_base(&self) -> &str {
        &self.problem_base
    }

    /// Whether requests with this method are handled (others pass straight through).
    pub fn covers(&self, method: &Method) -> bool {
        self.methods.contains(method)
    }

    /// Whether this request must carry a key (a keyless one then gets 400).
    pub fn requires_key(&self, parts: &Parts) -> bool {
        self.require_key
            .as_ref()
            .is_some_and(|required| required(parts))
    }

    /// The caller the request belongs to.
    pub fn scope(&self, parts: &Parts) -> Scope {
        (self.scope)(parts)
    }

    /// The request body limit (413 beyond it).
    pub fn max_body_bytes(&self) -> usize {
        self.max_body_bytes
    }

    /// The largest response body stored whole.
    pub fn max_stored_body_bytes(&self) -> usize {
        self.max_stored_body_bytes
    }

    /// The duplicate policy.
    pub fn in_flight(&self) -> InFlight {
        self.in_flight
    }

    /// The response store.
    pub fn store(&self) -> &Arc<dyn Entries> {
        &self.store
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("methods", &self.methods)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("max_stored_body_bytes", &self.max_stored_body_bytes)
            .field("in_flight", &self.in_flight)
            .finish_non_exhaustive()
    }
}

/// The inner service, called at most once per request, with its failures turned into 500s.
#[doc(hidden)]
pub struct Next {
    call: Box<dyn FnOnce(Request<Body>) -> BoxFuture<Response<Body>> + Send>,
}

impl Next {
    /// Wraps a one-shot call (useful to drive an [`Engine`] directly).
    pub fn new(
        call: impl FnOnce(Request<Body>) -> BoxFuture<Response<Body>> + Send + 'static,
    ) -> Self {
        Self {
            call: Box::new(call),
        }
    }

    /// Runs the inner service on `request`.
    pub async fn run(self, request: Request<Body>) -> Response<Body> {
        (self.call)(request).await
    }

    /// The inner service's future for `request`, already boxed (so it is `Unpin`).
    pub fn call(self, request: Request<Body>) -> BoxFuture<Response<Body>> {
        (self.call)(request)
    }
}

impl fmt::Debug for Next {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Next")
    }
}
