//! A hardened HTTP/1.1 server for any tower service: what stands between the lab's services
//! and clients that stall, flood or leave.
//!
//! A service that makes retries safe is no use if one slow client can hold it: every
//! connection here has a head, a body and an idle clock, the number of connections is capped
//! (one more is answered 503 with `Retry-After`), and a stop lets the requests in hand finish
//! within a deadline, counting those it had to cut off. The programs of the later stages
//! (payments replicas, the outbox's consumer) serve through [`serve`] and stop on
//! [`signalled`].
//!
//! # Reading order
//!
//! 1. `server.rs`: [`serve`], the accept loop with its connection cap, one connection's task,
//!    the 503 refusal, and the graceful stop; [`signalled`], the stop a program waits for.
//! 2. `timeouts.rs`: the head, body and idle clocks of each connection, and the body deadline
//!    a handler sees as a typed error.
//! 3. `running.rs`: [`Running`], the work a stop waits for, including a handler whose client
//!    left and that runs on beyond its connection.
//! 4. `loopback.rs` (feature `loopback`, for tests, examples and demos): a server on
//!    127.0.0.1 and a small client for it.
//!
//! # Example
//!
//! ```
//! use std::convert::Infallible;
//! use bytes::Bytes;
//! use http::{Request, Response};
//! use http_body_util::Full;
//! use retrykey_server::{RequestBody, ServerLimits, serve};
//! use tokio::io::{AsyncReadExt, AsyncWriteExt};
//! use tokio::net::{TcpListener, TcpStream};
//! use tower::service_fn;
//!
//! # #[tokio::main]
//! # async fn main() -> std::io::Result<()> {
//! let hello = service_fn(|_request: Request<RequestBody>| async {
//!     Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(b"hello"))))
//! });
//! let listener = TcpListener::bind("127.0.0.1:0").await?;
//! let addr = listener.local_addr()?;
//! let (stop, stopping) = tokio::sync::oneshot::channel::<()>();
//! let server = tokio::spawn(serve(listener, hello, ServerLimits::default(), async {
//!     let _ = stopping.await;
//! }));
//!
//! let mut client = TcpStream::connect(addr).await?;
//! client.write_all(b"GET / HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n").await?;
//! let mut reply = String::new();
//! client.read_to_string(&mut reply).await?;
//! assert!(reply.starts_with("HTTP/1.1 200 OK") && reply.ends_with("hello"));
//!
//! let _ = stop.send(());
//! assert_eq!(server.await.expect("the server ran").cut_off, 0);
//! # Ok(())
//! # }
//! ```

#[cfg(feature = "loopback")]
pub mod loopback;
mod problem;
mod running;
mod server;
pub mod timeouts;

pub use problem::{PROBLEM_JSON, TYPE_BASE};
pub use running::{Running, Tracked};
pub use server::{RequestBody, ServerLimits, Stopped, serve, signalled};
pub use timeouts::{BodyTimedOut, Timeouts};

/// Any error a body can produce, boxed so bodies of different origins share one type.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
