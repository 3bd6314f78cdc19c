//! The tower `Layer` and `Service` and their options, around the request-handling core.
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//! use http::Method;
//! use retrykey_http::{IdempotencyLayer, InFlight};
//!
//! let layer = IdempotencyLayer::builder()
//!     .methods([Method::POST])
//!     .require_key(|parts| parts.uri.path() == "/payments")
//!     .in_flight(InFlight::Wait(Duration::from_secs(5)))
//!     .build();
//! // `layer` goes into `axum::Router::layer`, `tower::ServiceBuilder::layer`, or wraps a
//! // hyper service with `tower_layer::Layer::layer`.
//! # let _ = layer;
//! ```

use std::convert::Infallible;
use std::fmt;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::request::Parts;
use http::{Method, Request, Response};
use tokio::task::futures::TaskLocalFuture;
use tower_layer::Layer;
use tower_service::Service;
use tracing::Instrument;
use tracing::instrument::Instrumented;

use crate::body::{self, Body, BoxError};
use crate::config::{DEFAULT_WAIT, PartsPredicate, ScopeFn};
use crate::observe;
use crate::observed::Observed;
use crate::problem::{self, TYPE_BASE};
use crate::{
    BoxFuture, Config, Engine, Entries, InFlight, MemoryEntries, Next, Problem, Scope,
    StandardEngine, StoreLimits,
};

/// Options for [`IdempotencyLayer`]; every one has a safe default.
pub struct Builder {
    methods: Vec<Method>,
    require_key: Option<PartsPredicate>,
    scope: ScopeFn,
    max_body_bytes: usize,
    max_stored_body_bytes: usize,
    in_flight: InFlight,
    problem_base: Arc<str>,
    store: Option<Arc<dyn Entries>>,
    store_limits: StoreLimits,
    engine: Arc<dyn Engine>,
}

impl Default for Builder {
    fn default() -> Self {
        Self {
            methods: vec![Method::POST, Method::PATCH],
            require_key: None,
            scope: Arc::new(Scope::from_bearer),
            max_body_bytes: 1 << 20,
            max_stored_body_bytes: 64 << 10,
            in_flight: InFlight::Wait(DEFAULT_WAIT),
            problem_base: Arc::from(TYPE_BASE),
            store: None,
            store_limits: StoreLimits::default(),
            engine: Arc::new(StandardEngine),
        }
    }
}

impl Builder {
    /// The methods handled (default POST and PATCH); all others pass through, never stored.
    pub fn methods(mut self, methods: impl IntoIterator<Item = Method>) -> Self {
        self.methods = methods.into_iter().collect();
        self
    }

    /// Requests matching `predicate` must carry a key; without one they get 400.
    pub fn require_key(
        mut self,
        predicate: impl Fn(&Parts) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.require_key = Some(Arc::new(predicate));
        self
    }

    /// Who the caller is (default: [`Scope::from_bearer`]). Put your authenticated account here.
    pub fn scope(mut self, scope: impl Fn(&Parts) -> Scope + Send + Sync + 'static) -> Self {
        self.scope = Arc::new(scope);
        self
    }

    /// The request body limit (default 1 MiB); larger bodies get 413 before any work.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Responses with a larger body are stored as status and `Location` only (default 64 KiB).
    pub fn max_stored_body_bytes(mut self, bytes: usize) -> Self {
        self.max_stored_body_bytes = bytes;
        self
    }

    /// What duplicates get while the first is running (default: wait up to [`DEFAULT_WAIT`]).
    pub fn in_flight(mut self, policy: InFlight) -> Self {
        self.in_flight = policy;
        self
    }

    /// What the `type` URI of the layer's problem answers starts with (default [`TYPE_BASE`],
    /// a URN that promises no page): a service that documents its problems at
    /// `https://api.example.com/problems/` sets that, and `key-reused` follows it.
    pub fn problem_base(mut self, base: impl Into<String>) -> Self {
        self.problem_base = Arc::from(base.into());
        self
    }

    /// The response store (default: a [`MemoryEntries`] with the limits below).
    pub fn store(mut self, store: impl Entries) -> Self {
        self.store = Some(Arc::new(store));
        self
    }

    /// An already shared response store.
    pub fn shared_store(mut self, store: Arc<dyn Entries>) -> Self {
        self.store = Some(store);
        self
    }

    /// Bounds and retention of the default in-memory store.
    pub fn store_limits(mut self, limits: StoreLimits) -> Self {
        self.store_limits = limits;
        self
    }

    /// Replaces the request-handling core (the negative variants use this seam).
    #[doc(hidden)]
    pub fn engine(mut self, engine: impl Engine) -> Self {
        self.engine = Arc::new(engine);
        self
    }

    /// The finished layer.
    pub fn build(self) -> IdempotencyLayer {
        let store = self
            .store
            .unwrap_or_else(|| Arc::new(MemoryEntries::new(self.store_limits)));
        // Every store's answers are reported as the layer's decisions (observe.rs).
        let store: Arc<dyn Entries> = Arc::new(Observed(store));
        IdempotencyLayer {
            config: Arc::new(Config {
                methods: self.methods,
                require_key: self.require_key,
                scope: self.scope,
                max_body_bytes: self.max_body_bytes,
                max_stored_body_bytes: self.max_stored_body_bytes,
                in_flight: self.in_flight,
                problem_base: self.problem_base,
                store,
                engine: self.engine,
            }),
        }
    }
}

/// The `Layer`: wraps a service so retries with the same `Idempotency-Key` take effect once.
#[derive(Debug, Clone)]
pub struct IdempotencyLayer {
    config: Arc<Config>,
}

impl IdempotencyLayer {
    /// A layer with every default.
    pub fn new() -> Self {
        Builder::default().build()
    }

    /// Options, starting from the defaults.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// The settings (and the store) this layer shares with its services.
    pub fn config(&self) -> &Arc<Config> {
        &self.config
    }
}

impl Default for IdempotencyLayer {
    fn default() -> Self {
        Self::new()
    }
}

impl<S> Layer<S> for IdempotencyLayer {
    type Service = Idempotency<S>;

    fn layer(&self, inner: S) -> Idempotency<S> {
        Idempotency {
            inner,
            config: Arc::clone(&self.config),
        }
    }
}

/// The `Service` the layer produces. Its own answers are responses, never errors.
#[derive(Debug, Clone)]
pub struct Idempotency<S> {
    inner: S,
    config: Arc<Config>,
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for Idempotency<S>
where
    S: Service<Request<Body>, Response = Response<ResBody>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    ReqBody: http_body::Body<Data = Bytes> + Send + 'static,
    ReqBody::Error: Into<BoxError>,
    ResBody: http_body::Body<Data = Bytes> + Send + 'static,
    ResBody::Error: Into<BoxError>,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // Readiness of the inner service is awaited only if the request reaches it: replays,
        // rejections and waits never need it.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        let mut inner = self.inner.clone();
        let next = Next::new(move |request| {
            Box::pin(async move {
                let ready: Result<(), BoxError> = poll_fn(|cx| inner.poll_ready(cx))
                    .await
                    .map_err(|error| error.into());
                let called = match ready {
                    Ok(()) => inner.call(request).await.map_err(|error| error.into()),
                    Err(error) => Err(error),
                };
                match called {
                    Ok(response) => response.map(body::boxed),
                    Err(error) => {
                        tracing::warn!(%error, "inner service failed");
                        Problem::HandlerFailed.response(None)
                    }
                }
            })
        });
        let config = Arc::clone(&self.config);
        let engine = Arc::clone(&config.engine);
        // One span per keyed request, around everything the engine does for it.
        let span = if config.covers(request.method())
            && request.headers().contains_key(crate::IDEMPOTENCY_KEY)
        {
            observe::request_span(request.method(), request.uri().path())
        } else {
            tracing::Span::none()
        };
        let base = Arc::clone(&config.problem_base);
        let handled = engine.handle(config, request.map(body::boxed), next);
        ResponseFuture {
            answer: problem::with_base(base, handled.instrument(span)),
        }
    }
}

pin_project_lite::pin_project! {
    /// The future of [`Idempotency`]: the engine's answer, which is never an error.
    pub struct ResponseFuture {
        #[pin]
        answer: TaskLocalFuture<Arc<str>, Instrumented<BoxFuture<Response<Body>>>>,
    }
}

impl Future for ResponseFuture {
    type Output = Result<Response<Body>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.project().answer.poll(cx).map(Ok)
    }
}

impl fmt::Debug for ResponseFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ResponseFuture")
    }
}
