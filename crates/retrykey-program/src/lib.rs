//! How the lab's programs start, read their flags, and tell the time: the plumbing that the
//! replicas' `payments` and `spray` and the outbox's `documents`, `dispatcher`, `converter` and
//! `reconcile` share, so that every one of them refuses a bad flag, fails and reads its clock
//! the same way.
//!
//! A program checks every flag's value before it opens anything, so that a mistyped value
//! leaves no database behind; a refusal is one line on stderr and exit status 2, a failure one
//! line and exit status 1. The stores read lease, claim and retention times from a [`Clock`],
//! which a test can set ahead to play a process whose clock runs fast.
//!
//! The flags and the start-up are the `cli` feature's, off by default: a library that only
//! reads the [`Clock`] (a store) pulls in no flag parser.
//!
//! # Reading order
//!
//! 1. `program.rs`: [`parse`] (flags, or the exit to make now) and [`run`] (the runtime, and
//!    a failure as one line).
//! 2. `flags.rs`: the values flags take ([`flags::Span`], [`flags::Database`], counts, schema
//!    names), [`flags::FlagError`], and the one line a refusal prints.
//! 3. `clock.rs`: [`Clock`], the wall clock in milliseconds, and one that runs ahead.
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//! use retrykey_program::Clock;
//! use retrykey_program::flags::{Database, FlagError, Span};
//!
//! let lease: Span = "30s".parse().unwrap();
//! assert_eq!(lease.0, Duration::from_secs(30));
//! assert_eq!(Database::parse("postgres", None), Err(FlagError::NoPgUrl));
//!
//! // A clock an hour ahead reads an hour later than this machine's.
//! let ahead = Clock::ahead(Duration::from_secs(3600)).now_ms();
//! assert!(ahead - Clock::system().now_ms() >= 3_599_000);
//! ```

mod clock;
#[cfg(feature = "cli")]
pub mod flags;
#[cfg(feature = "cli")]
mod program;

pub use clock::Clock;
#[cfg(feature = "cli")]
pub use program::{LOG, parse, run};
