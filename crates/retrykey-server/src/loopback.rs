//! Loopback plumbing for the demos, tests and load runs: a server on 127.0.0.1, a client for it.
//!
//! [`LoopbackClient`] sends every header value raw, exactly as given: an `Idempotency-Key` of
//! `a b` or `"q"` goes on the wire as those bytes, which is what the hostile-input tests need.
//! A program that sends a caller's keys encodes them first with the retry client's
//! `retrykey_client::adapters::KeyHeader`, as `spray` does.
//!
//! # Example
//!
//! ```
//! use std::convert::Infallible;
//! use bytes::Bytes;
//! use http::{Request, Response};
//! use http_body_util::Full;
//! use retrykey_server::RequestBody;
//! use retrykey_server::loopback::{LoopbackClient, Server};
//! use tower::service_fn;
//!
//! # #[tokio::main]
//! # async fn main() -> Result<(), retrykey_server::BoxError> {
//! let service = service_fn(|request: Request<RequestBody>| async move {
//!     let answer = format!("{} {}", request.method(), request.uri().path());
//!     Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(answer))))
//! });
//! let server = Server::start(service).await?;
//! let client = LoopbackClient::new(server.url());
//! let reply = client.post("/payments", &[("idempotency-key", "k")], r#"{"amount":5}"#).await?;
//! assert_eq!((reply.status, reply.body.as_str()), (200, "POST /payments"));
//! assert!(!reply.replayed());
//! assert_eq!(server.stop().await.cut_off, 0);
//! # Ok(())
//! # }
//! ```

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tower_service::Service;

use crate::BoxError;
use crate::server::{RequestBody, ServerLimits, Stopped, serve};

/// A server on 127.0.0.1 with an OS-chosen port, running in the background.
#[derive(Debug)]
pub struct Server {
    addr: SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<Stopped>,
}

impl Server {
    /// Binds 127.0.0.1:0 and starts serving, within the default [`ServerLimits`].
    pub async fn start<S, B>(service: S) -> std::io::Result<Self>
    where
        S: Service<Request<RequestBody>, Response = Response<B>, Error = Infallible>
            + Clone
            + Send
            + 'static,
        S::Future: Send + 'static,
        B: http_body::Body<Data = Bytes> + Send + Unpin + 'static,
        B::Error: Into<BoxError>,
    {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(serve(listener, service, ServerLimits::default(), async {
            let _ = stopped.await;
        }));
        Ok(Self { addr, stop, task })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops accepting and waits for open connections to finish (within the limits' shutdown
    /// deadline); says how many were cut off.
    pub async fn stop(self) -> Stopped {
        let _ = self.stop.send(());
        // The task is never aborted, so it can only fail by panicking: pass that on.
        match self.task.await {
            Ok(stopped) => stopped,
            Err(error) => std::panic::resume_unwind(error.into_panic()),
        }
    }
}

/// What came back: status, headers and the body as text.
#[derive(Debug, Clone)]
pub struct LoopbackReply {
    /// The status code.
    pub status: u16,
    /// The response headers.
    pub headers: HeaderMap,
    /// The body, decoded as UTF-8 (lossily), trailing newline removed.
    pub body: String,
}

impl LoopbackReply {
    /// A header's value as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }

    /// Whether this was a replay (`Idempotent-Replayed: true`).
    pub fn replayed(&self) -> bool {
        self.header("idempotent-replayed") == Some("true")
    }
}

/// A small pooled HTTP/1.1 client for one base URL.
///
/// It sends headers raw, with no encoding: a test can hand the layer any value at all,
/// malformed ones included.
#[derive(Debug, Clone)]
pub struct LoopbackClient {
    inner: HyperClient<HttpConnector, Full<Bytes>>,
    base: String,
}

impl LoopbackClient {
    /// A client for `base` (such as `http://127.0.0.1:8080`).
    pub fn new(base: impl Into<String>) -> Self {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        Self {
            inner: HyperClient::builder(TokioExecutor::new()).build(connector),
            base: base.into(),
        }
    }

    /// Sends one request, each header value exactly as given, and reads the whole reply.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: impl Into<Bytes>,
    ) -> Result<LoopbackReply, BoxError> {
        let mut request = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = self
            .inner
            .request(request.body(Full::new(body.into()))?)
            .await?;
        let (parts, body) = response.into_parts();
        let bytes = body.collect().await?.to_bytes();
        Ok(LoopbackReply {
            status: parts.status.as_u16(),
            headers: parts.headers,
            body: String::from_utf8_lossy(&bytes).trim_end().to_owned(),
        })
    }

    /// A POST with a JSON content type.
    pub async fn post(
        &self,
        path: &str,
        headers: &[(&str, &str)],
        body: impl Into<Bytes>,
    ) -> Result<LoopbackReply, BoxError> {
        let mut all = vec![("content-type", "application/json")];
        all.extend_from_slice(headers);
        self.send(Method::POST, path, &all, body).await
    }

    /// A GET.
    pub async fn get(
        &self,
        path: &str,
        headers: &[(&str, &str)],
    ) -> Result<LoopbackReply, BoxError> {
        self.send(Method::GET, path, headers, Bytes::new()).await
    }
}
