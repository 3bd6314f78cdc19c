//! An `Idempotency-Key` middleware for tower, usable with axum and plain hyper.
//!
//! A client that lost the reply to a POST cannot tell whether the work happened. If it sends
//! an `Idempotency-Key` and retries with the same one, this layer makes sure the handler runs
//! once and every attempt gets the same answer:
//!
//! - the first request with a key runs the handler; its answer is stored;
//! - a retry with the same key and the same request gets the stored answer again, marked
//!   `Idempotent-Replayed: true`;
//! - a duplicate that arrives while the first still runs waits for it (or gets 409);
//! - the same key with a different request gets 422;
//! - a 5xx is not stored: the key is released and the next attempt runs afresh;
//! - a client that disconnects does not cancel the handler: its answer is still stored.
//!
//! It needs a Tokio runtime (with its time driver, for the wait deadline), as hyper and axum
//! servers have.
//!
//! # Example
//!
//! ```
//! use std::convert::Infallible;
//! use http::{Request, Response};
//! use retrykey_http::{Body, IdempotencyLayer, body::full};
//! use tower::{ServiceBuilder, ServiceExt, service_fn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let service = ServiceBuilder::new()
//!     .layer(IdempotencyLayer::new())
//!     .service(service_fn(|_req: Request<Body>| async {
//!         Ok::<_, Infallible>(Response::builder().status(201).body(full("created")).unwrap())
//!     }));
//!
//! let post = || Request::post("/things").header("idempotency-key", "k-1").body(full("x")).unwrap();
//! let first = service.clone().oneshot(post()).await.unwrap();
//! let retry = service.clone().oneshot(post()).await.unwrap();
//! assert_eq!(first.status(), 201);
//! assert_eq!(retry.headers()["idempotent-replayed"], "true");
//! # }
//! ```

// Lets `engine.rs` and `memory.rs` name this crate as `retrykey_http`, exactly as the negative
// variants under `labs/` do when they copy one of them: the copies then differ from the
// original only in their one change.
extern crate self as retrykey_http;

pub mod body;
mod engine;
mod error;
mod fingerprint;
mod key;
mod layer;
pub mod loopback;
mod memory;
pub mod payments;
mod problem;
mod store;
mod stored;

pub use body::{Body, BoxError};
pub use engine::Standard;
pub use error::{Error, KeyProblem};
pub use fingerprint::Fingerprint;
pub use key::{EntryId, IDEMPOTENCY_KEY, IdempotencyKey, MAX_KEY_CHARS, Scope};
pub use layer::{
    BoxFuture, Builder, Config, Engine, Idempotency, IdempotencyLayer, InFlight, Next,
    ResponseFuture,
};
pub use memory::MemoryStore;
pub use problem::{PROBLEM_JSON, Problem, TYPE_BASE};
pub use store::{Lookup, Outcome, Reserve, ResponseStore, StoreFuture, StoreLimits, Token, Waiter};
pub use stored::{IDEMPOTENT_REPLAYED, StoredResponse};
