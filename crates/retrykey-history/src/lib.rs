//! A history of keyed requests and the rules that judge it.
//!
//! A run records what happened as a [`History`]: every attempt a client sent under an
//! operation key and what it got back, and, where the recorder can see them, every handler run
//! and every effect on the server. The rules then judge the whole history from the outside, as a
//! person holding the clients' screens and the payments ledger could by hand. The simulator
//! records its runs here, with the server's side too; a run against a real server over TCP
//! records only what its clients saw, and the same rules judge it.
//!
//! The judge shares no code with the layer or the retry client it judges, so a bug in either
//! cannot hide itself here. Std only.
//!
//! # Reading order
//!
//! 1. `history.rs`: what a run records, from the clients' side and the server's.
//! 2. `check.rs`: the rules a history must keep, judged from the outside.
//!
//! # Example
//!
//! ```
//! use retrykey_history::{Entry, HistoryEvent, Rule, judge};
//!
//! let effect = |at_ms, payment| Entry {
//!     at_ms,
//!     host: "bank".to_owned(),
//!     event: HistoryEvent::Effect {
//!         key: "k1".to_owned(),
//!         amount: 7,
//!         payment,
//!     },
//! };
//! // One payment under k1 keeps every rule.
//! assert_eq!(judge(&[effect(5, 1)]), Ok(()));
//! // A second payment under the same key breaks the first rule, and names the key.
//! let violation = judge(&[effect(5, 1), effect(40, 2)]).unwrap_err();
//! assert_eq!(violation.rule, Rule::OneEffectPerKey);
//! assert_eq!(violation.keys, ["k1"]);
//! ```

mod check;
mod history;

pub use check::{Rule, Violation, judge, violations};
pub use history::{
    Ended, Entry, HandlerEnd, History, HistoryEvent, NoReply, OpId, Reply, short_key,
};
