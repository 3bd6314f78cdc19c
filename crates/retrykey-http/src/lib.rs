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
//! servers have. Serving it to hostile clients (timeouts, a connection cap, a graceful stop)
//! is the work of `retrykey-server`, which knows nothing of keys.
//!
//! # Reading order
//!
//! 1. `key.rs`: the header, the caller's scope, and the digest an entry is named by.
//! 2. `fingerprint.rs`: what a key is bound to, so a key reused for another request is caught.
//! 3. `entries.rs`: the four operations the layer asks of its entries (lookup, reserve, complete,
//!    release), and why reserving must refuse a taken key by itself.
//! 4. `config.rs`: what the layer hands the engine for each request: its settings and the inner
//!    service, and the `Engine` seam the engine plugs in at.
//! 5. `engine.rs`: one request, step by step: replay, wait, or run the first attempt, which a
//!    client that leaves cannot cancel.
//! 6. `layer.rs`: the tower `Layer` and its options, around the engine.
//! 7. `memory.rs`: the in-memory store, one mutex around lookup, reservation and byte count.
//! 8. Then as needed: `stored.rs` (what a replay keeps), `problem.rs` (the layer's own
//!    answers), `observe.rs` (the span and the events that report each decision) and
//!    `observed.rs` (the store's answers as decisions), `body.rs`, `error.rs`, and the demos'
//!    `payments.rs` (the `demo` feature, off by default).
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

pub mod body;
mod config;
mod engine;
mod entries;
mod error;
mod fingerprint;
mod key;
mod layer;
mod memory;
pub mod observe;
mod observed;
#[cfg(feature = "demo")]
pub mod payments;
mod problem;
mod stored;

pub use body::{Body, BoxError};
#[doc(hidden)]
pub use config::{BoxFuture, Engine, Next};
pub use config::{Config, DEFAULT_WAIT, InFlight};
#[doc(hidden)]
pub use engine::StandardEngine;
pub use entries::{
    AttemptEnd, Entries, EntriesFuture, Lookup, Reservation, Reserve, StoreLimits, Token, Waiter,
};
pub use error::{Error, KeyHeaderProblem};
pub use fingerprint::Fingerprint;
pub use key::{EntryId, IDEMPOTENCY_KEY, IdempotencyKey, MAX_KEY_CHARS, Scope};
pub use layer::{Builder, Idempotency, IdempotencyLayer, ResponseFuture};
pub use memory::MemoryEntries;
pub use problem::{PROBLEM_JSON, Problem, TYPE_BASE, problem_response};
pub use stored::{IDEMPOTENT_REPLAYED, NotKept, StoredResponse};
