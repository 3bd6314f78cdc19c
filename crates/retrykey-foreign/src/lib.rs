//! Stage 9: a call to another service in the middle of a request.
//!
//! A checkout creates an order, charges a card through a payment provider, and confirms the
//! order. The charge happens in the provider's database, not in the checkout's: no transaction
//! spans both, so "effect and record commit together" cannot hold in one step. The request runs
//! in atomic phases instead. Each phase is one local transaction of the key's store, fenced by
//! the attempt's reservation, that ends at a recovery point; the foreign call sits between two
//! phases, under a key derived from the operation's own ([`foreign_key`]), so that any retry of
//! the call, by the client or by a completer, is the same operation to the provider. A
//! completer finishes the operations whose client left; it takes the operation's key first
//! ([`claim`]), so that it and a late retry never both drive one.
//!
//! The library is those two pieces; the checkout and the provider that show them at work are
//! behind the `demo` feature.
//!
//! # Example
//!
//! ```
//! use retrykey_foreign::{Claim, claim, foreign_key};
//! use retrykey_http::{EntryId, Fingerprint, IdempotencyKey, MemoryEntries, Scope, StoreLimits};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let operation = EntryId::new(&Scope::Anonymous, &IdempotencyKey::parse(b"cart-7")?);
//! // Every attempt of the operation, and its completer, present one key to the provider.
//! let charge = foreign_key(&operation, "charge");
//! assert_eq!(charge, foreign_key(&operation, "charge"));
//! assert_ne!(charge, foreign_key(&operation, "refund"));
//!
//! // A completer takes the operation's key as a retry of its request would...
//! let entries = MemoryEntries::new(StoreLimits::default());
//! let fingerprint = Fingerprint::from_bytes([7; 32]);
//! let Claim::Held(fence) = claim(&entries, &operation, &fingerprint).await? else {
//!     panic!("the key was free");
//! };
//! assert_eq!(fence.id, operation);
//! // ...so that while it drives the operation, nobody else does.
//! assert_eq!(claim(&entries, &operation, &fingerprint).await?, Claim::Running);
//! # Ok(())
//! # }
//! ```
//!
//! # Reading order
//!
//! 1. `key.rs`: the foreign call's key, derived from the operation's, never fresh.
//! 2. `completer.rs`: how a completer takes an operation's key.
//! 3. `provider.rs` (`demo`): the provider the lab calls, with its own Idempotency-Key contract
//!    and the faults a test asks of it.
//! 4. `books.rs`, then `sqlite.rs` (or `pg.rs`) (`demo`): the checkout's rows, one method per
//!    phase, each phase one transaction that ends at a recovery point.
//! 5. `phases.rs` (`demo`): an operation resumed from its last recovery point.
//! 6. `checkout.rs` (`demo`): the service, its completer and its reaper.
//! 7. `memory.rs` (`demo`) and `sim.rs` (`sim`): the same rows in memory, and the simulator's
//!    `foreign` scenario that runs the checkout and a provider in stage 8's network.

#[cfg(feature = "demo")]
pub mod answers;
#[cfg(feature = "demo")]
mod books;
#[cfg(feature = "demo")]
pub mod checkout;
mod completer;
#[cfg(feature = "demo")]
pub mod crash;
mod key;
#[cfg(feature = "demo")]
pub mod memory;
#[cfg(feature = "demo")]
mod parts;
#[cfg(feature = "demo")]
pub mod pg;
#[cfg(feature = "demo")]
pub mod phases;
#[cfg(feature = "demo")]
pub mod provider;
#[cfg(feature = "sim")]
pub mod sim;
#[cfg(feature = "demo")]
pub mod sqlite;

#[cfg(feature = "demo")]
pub use books::{Books, BooksError, BooksFuture, End, Order, Point, Progress, Purchase};
#[cfg(feature = "demo")]
#[doc(hidden)]
pub use books::{before, now_ms};
#[cfg(feature = "demo")]
pub use checkout::{Checkout, Completed, CompleterError};
pub use completer::claim;
pub use key::{FOREIGN_KEY_PREFIX, foreign_key};
#[cfg(feature = "demo")]
pub use memory::MemoryBooks;
#[cfg(feature = "demo")]
pub use parts::{
    CheckoutParts, KeyFn, ProviderAnswer, ProviderCall, ProviderFuture, ProviderTransport,
};
#[cfg(feature = "demo")]
pub use pg::PgBooks;
#[cfg(feature = "demo")]
pub use sqlite::SqliteBooks;

/// What a completer's [`claim`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// The completer holds the operation's key, with a token higher than any before it: it
    /// drives the operation, and releases the key if it cannot finish it.
    Held(retrykey_http::Reservation),
    /// An attempt holds the key and drives the operation: the completer leaves it alone.
    Running,
    /// The operation's answer is stored: there is nothing left to drive.
    Done,
}
