//! Retries that keep their identity.
//!
//! A retry decides *whether and when* to try again; an operation key decides *which attempts are
//! the same operation*. This crate runs one logical operation as a sequence of attempts that all
//! present one key, under one policy (attempts, backoff with full jitter, one overall budget),
//! one client-wide retry quota, and an explicit classification of what may be retried. The
//! result keeps three cases apart: [`Outcome::Succeeded`], [`Outcome::Rejected`] and
//! [`Outcome::Unknown`] — the last one is what the *caller* knows, not a state of the server.
//!
//! The core is transport-agnostic: an attempt is any async function from an [`Attempt`] to a
//! [`Success`] or a [`Failure`]. Adapters are ready for the in-memory ledger
//! ([`adapters::MemoryAdapter`]), for HTTP (`adapters::HttpAdapter`, any method with the
//! caller's headers and a per-attempt timeout, described by `adapters::HttpRequest`) and for the
//! loopback TCP ledger service in [`tcp`]. A transport failure keeps what broke as a typed
//! [`TransportError`]; the key every attempt carries is [`Key`], re-exported from the core.
//!
//! # Features
//!
//! - `http` (off by default): `adapters::HttpAdapter` and `adapters::HttpRequest`, and the
//!   `reqwest` client behind them. Without it the crate builds no HTTP client; the header
//!   encoder ([`adapters::KeyHeader`]) and the reading of an HTTP answer
//!   ([`adapters::HttpResponse::judge`]) are always there, for a caller's own transport.
//!
//! # Tracing
//!
//! The executor emits a [`tracing`](https://docs.rs/tracing) event when an attempt starts and
//! when it ends (DEBUG), and one per decision: a retry after a wait and a success (INFO), a
//! definitive rejection and an unknown outcome with its reason (WARN). None is ERROR: each is an
//! outcome the caller is built to handle. Every event names the operation by
//! [`fields::KeyDigest`], the first 16 hex characters of the SHA-256 of the key, never by the
//! key's text. The field names (`key_digest`, `attempt`, `outcome`, `decision`, `delay_ms`,
//! ...) are constants in [`fields`], whose page has the table of events and fields.
//!
//! # Reading order
//!
//! 1. `outcome.rs`: the three results a caller must tell apart; everything else serves them.
//! 2. `attempt.rs`, `failure.rs` and `transport.rs`: what one attempt receives, returns, or
//!    reports as failed, and the typed cause of a transport failure.
//! 3. `policy.rs`, `budget.rs` and `quota.rs`: the limits on one operation and on one client.
//! 4. `executor.rs`: the retry loop, one key fixed before the first attempt. It asks
//!    `classify.rs` (retry or not), `backoff.rs` (how long to wait), `retry_after.rs` (the
//!    service's own wait) and `nesting.rs` (a nested layer's budget), and reports each step
//!    through `events.rs`, with the field names of `fields.rs`.
//! 5. `client.rs`: the entry points (`run`, `run_with_key`, `run_nested`), the shared quota, and
//!    the pieces a client's executor is built from (`RetrySteps`); `rng.rs` is its generator.
//! 6. `adapters/` and `tcp/`: attempt functions for the in-memory ledger, HTTP (the request in
//!    `http_request.rs`, the adapter in `http.rs`, the reading of an answer in
//!    `http_response.rs`) and loopback TCP.
//! 7. `amplification.rs` and `examples/`: the demos the book runs.
//!
//! `RetrySteps` is the seam the labs plug their copy of one file into (`labs/README.md`);
//! `steps.rs` puts the correct loop into it.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use retrykey::{Ledger, Request, Store};
//! use retrykey_client::{Client, Outcome, Policy, adapters::MemoryAdapter};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! let store = Arc::new(Store::new());
//! let ledger = MemoryAdapter::new(store.clone());
//! ledger.lose_next_replies(1); // the first attempt commits, then its reply is lost
//!
//! let client = Client::builder(Policy::default()).seed(7).build();
//! let request = Request::new("convert-document", 7)?;
//! let outcome = client.run(|attempt| ledger.apply(attempt, &request)).await;
//!
//! let Outcome::Succeeded { value, replayed, attempts } = outcome else { panic!("{outcome:?}") };
//! assert_eq!((value.operation, value.total, replayed, attempts), (1, 7, true, 2));
//! assert_eq!(store.total()?, 7); // the retry found the record: one effect
//! # Ok::<(), retrykey::Error>(())
//! # }).unwrap();
//! ```

pub mod adapters;
pub mod amplification;
mod attempt;
pub mod backoff;
mod budget;
pub mod classify;
mod client;
mod error;
// The executor's events, called from the mirrored executor: see `fields` for what they carry.
#[doc(hidden)]
pub mod events;
#[doc(hidden)]
pub mod executor;
mod failure;
pub mod fields;
#[doc(hidden)]
pub mod nesting;
mod outcome;
mod policy;
mod quota;
pub mod retry_after;
mod rng;
mod steps;
pub mod tcp;
mod transport;

pub use attempt::{Attempt, Success};
pub use budget::Budget;
pub use client::{Client, ClientBuilder};
pub use error::Error;
pub use failure::{Failure, StatusFailure, Verdict};
pub use outcome::{Outcome, Stop};
/// The operation key every attempt carries, re-exported so that a caller can name it without a
/// direct dependency on the core crate.
pub use retrykey::Key;
// The seam the labs plug their copies into (labs/README.md): not part of the documented API.
#[doc(hidden)]
pub use client::{RetrySteps, StandardSteps};
pub use policy::{
    DEFAULT_BASE, DEFAULT_BUDGET, DEFAULT_CAP, DEFAULT_MAX_ATTEMPTS, Policy, PolicyBuilder,
};
pub use quota::{
    DEFAULT_QUOTA_CAPACITY, DEFAULT_RETRY_COST, DEFAULT_SUCCESS_REFUND, DEFAULT_TIMEOUT_COST,
    RetryQuota,
};
pub use rng::JitterRng;
pub use transport::TransportError;
