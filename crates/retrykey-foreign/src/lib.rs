//! Stage 9: a call to another service in the middle of a request.
//!
//! A checkout creates an order, charges a card through a payment provider, and confirms the
//! order. The charge happens in the provider's database, not in the checkout's: no transaction
//! spans both, so "effect and record commit together" cannot hold in one step. The request runs
//! in atomic phases instead. Each phase is one local transaction of the key's store, fenced by
//! the attempt's reservation, that ends at a recovery point; the foreign call sits between two
//! phases, under a key derived from the operation's own ([`foreign_key`]), so that any retry of
//! the call, by the client or by a completer, is the same operation to the provider.
//!
//! # Reading order
//!
//! 1. `key.rs`: the foreign call's key, derived from the operation's, never fresh.
//! 2. `provider.rs` (the `demo` feature): the provider the lab calls, with its own
//!    Idempotency-Key contract and the faults a test asks of it.
//! 3. `checkout.rs` (the `demo` feature): the checkout in atomic phases, its recovery points,
//!    and the foreign call between them.

#[cfg(feature = "demo")]
pub mod checkout;
#[cfg(feature = "demo")]
pub mod crash;
mod key;
#[cfg(feature = "demo")]
pub mod provider;

pub use key::{FOREIGN_KEY_PREFIX, foreign_key};
