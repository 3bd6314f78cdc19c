//! The store as the layer reports it: each answer of the store is one of the layer's decisions
//! (the vocabulary is `observe.rs`'s).

use std::sync::Arc;

use tracing::Span;

use crate::observe::name_entry;
use crate::{
    AttemptEnd, Entries, EntriesFuture, EntryId, Fingerprint, Lookup, Reserve, StoredResponse,
    Token, Waiter,
};

/// A store whose every answer the layer reports as a decision.
pub(crate) struct Observed(pub(crate) Arc<dyn Entries>);

impl Entries for Observed {
    fn lookup<'a>(&'a self, id: &'a EntryId) -> EntriesFuture<'a, Lookup> {
        name_entry(id);
        self.0.lookup(id).map(|lookup| match lookup {
            Ok(Lookup::InFlight { fingerprint, wait }) => Ok(Lookup::InFlight {
                fingerprint,
                wait: observed_wait(wait),
            }),
            other => other,
        })
    }

    fn reserve<'a>(
        &'a self,
        id: &'a EntryId,
        fingerprint: &'a Fingerprint,
    ) -> EntriesFuture<'a, Reserve> {
        self.0.reserve(id, fingerprint).map(|reserve| {
            match &reserve {
                Ok(Reserve::Reserved(Token(token))) => {
                    tracing::info!(decision = "attempt", token, "first attempt");
                }
                Ok(Reserve::Taken) => tracing::debug!(decision = "lost_race", "lost the race"),
                // The engine answers these with a problem or a log line, which say so.
                Ok(Reserve::Full) | Err(_) => {}
            }
            reserve
        })
    }

    fn complete<'a>(
        &'a self,
        id: &'a EntryId,
        token: Token,
        response: StoredResponse,
    ) -> EntriesFuture<'a, ()> {
        self.0.complete(id, token, response).inspect(move |done| {
            if done.is_ok() {
                tracing::debug!(decision = "recorded", token = token.0, "answer stored");
            }
        })
    }

    fn release<'a>(&'a self, id: &'a EntryId, token: Token) -> EntriesFuture<'a, ()> {
        self.0.release(id, token).inspect(move |done| {
            if done.is_ok() {
                tracing::info!(decision = "released", token = token.0, "key released");
            }
        })
    }
}

/// A waiter that reports when the wait starts and how it ends.
fn observed_wait(wait: Waiter) -> Waiter {
    let span = Span::current();
    Waiter::new(tracing::Instrument::instrument(
        async move {
            tracing::info!(decision = "wait", "waiting for the first attempt");
            let end = wait.await;
            let outcome = match &end {
                AttemptEnd::Completed(_) => "completed",
                AttemptEnd::Released => "released",
                AttemptEnd::Lapsed => "lapsed",
            };
            tracing::info!(decision = "wait_ended", outcome, "wait ended");
            end
        },
        span,
    ))
}
