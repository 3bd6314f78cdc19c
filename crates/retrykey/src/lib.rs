//! A ledger that makes retries safe.
//!
//! A client sent work and lost the reply: it cannot tell "never happened" from "happened, reply
//! lost". This crate is the answer at its smallest scale. Every operation carries a [`Key`]; the
//! [`Store`] applies the effect and records its [`Receipt`] in one critical section, so a retry
//! that presents the same key finds the record and gets the original receipt back instead of
//! applying the effect twice.
//!
//! # Reading order
//!
//! 1. `key.rs` and `request.rs`: what a caller hands in, and why bad input is refused at once.
//! 2. `receipt.rs`: what a caller gets back, and what `replayed` means.
//! 3. `ledger.rs`: the contract every backend keeps, in four methods.
//! 4. `store.rs`: the whole idea in one function, `apply`; `limits.rs` is the rule it asks.
//! 5. `error.rs`: every way an operation is refused, each one leaving the ledger unchanged, and
//!    the longest key and job name accepted.
//! 6. `main.rs` and `story.rs`: the lost-reply story that `cargo run -p retrykey` prints.
//!
//! `sync.rs` only swaps `std::sync` for loom's under `--cfg loom`.
//!
//! # Example
//!
//! ```
//! use retrykey::{Key, Ledger, Request, Store};
//!
//! let store = Store::new();
//! let key = Key::new("op-1")?;
//! let request = Request::new("convert-document", 7)?;
//!
//! let first = store.apply(&key, &request)?; // imagine this reply is lost
//! let retry = store.apply(&key, &request)?; // the retry finds the record
//!
//! assert_eq!((first.operation, first.total, first.replayed), (1, 7, false));
//! assert_eq!((retry.operation, retry.total, retry.replayed), (1, 7, true));
//! assert_eq!(store.total()?, 7); // the effect happened once
//! # Ok::<(), retrykey::Error>(())
//! ```

mod error;
mod key;
mod ledger;
mod limits;
mod receipt;
mod request;
mod store;
#[doc(hidden)]
pub mod sync;

pub use error::{Error, KeyProblem, MAX_JOB_BYTES, MAX_KEY_BYTES, RequestProblem};
pub use key::Key;
pub use ledger::Ledger;
pub use limits::{DEFAULT_MAX_RECORDS, DEFAULT_MAX_UNITS, Limits};
pub use receipt::Receipt;
pub use request::Request;
pub use store::Store;
