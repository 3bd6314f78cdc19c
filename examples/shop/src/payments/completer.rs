//! The completer: it finishes the payments whose client left, taking each payment's key as a
//! retry of its request would, so that it never drives a payment beside an attempt.

use std::time::Duration;

use retrykey_foreign::{Claim, claim};
use retrykey_http::{Entries, EntryId, StoredResponse};
use tracing::Instrument;

use super::Failed;
use crate::{Shop, Store};

/// What one run of the completer did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Completed {
    /// Payments it drove to their end.
    pub finished: usize,
    /// Payments it could not finish yet (the charge still unknown): their keys released.
    pub unknown: usize,
    /// Payments an attempt holds right now: left to it.
    pub running: usize,
    /// Payments whose answer was stored by the time it claimed them.
    pub done: usize,
}

impl Shop {
    // ANCHOR: complete
    /// Drives to their end, at most `limit` of them, the payments that stopped at a recovery
    /// point at least `idle` ago because their client left (a 503 it never retried, a crash).
    ///
    /// It claims each payment's key as a retry of its request would, leaves a payment whose key
    /// an attempt holds, and releases the key of one it cannot finish yet, so that a later run
    /// or the client's retry asks again.
    pub async fn complete(&self, idle: Duration, limit: usize) -> Result<Completed, Failed> {
        let provider = (self.provider.as_deref()).ok_or("the completer needs a provider")?;
        let entries: &dyn Entries = match &self.store {
            Store::Sqlite(store) => store,
            Store::Postgres(store) => store,
        };
        let mut completed = Completed::default();
        for request in self.stalled(idle, limit).await? {
            let fence = match claim(entries, &request.id, &request.fingerprint).await? {
                Claim::Held(fence) => fence,
                Claim::Running => {
                    completed.running += 1;
                    continue;
                }
                Claim::Done => {
                    completed.done += 1;
                    continue;
                }
            };
            let span = tracing::info_span!("completer", entry = %digest(&request.id));
            let resumed = self.resume(provider, fence, request).instrument(span).await;
            if resumed.status().is_server_error() {
                completed.unknown += 1;
                owned(entries.release(&fence.id, fence.token).await)?;
            } else {
                completed.finished += 1;
                // The attempt ends as the layer ends one: the last phase stored this answer with
                // its rows, so the store writes nothing more and stops renewing the lease.
                let (parts, body) = resumed.into_parts();
                let body = axum::body::to_bytes(body, 64 * 1024).await?;
                let answer = StoredResponse::new(parts.status, &parts.headers, &body);
                owned(entries.complete(&fence.id, fence.token, answer).await)?;
            }
        }
        let Completed {
            finished,
            unknown,
            running,
            done,
        } = completed;
        tracing::info!(finished, unknown, running, done, "the completer ran");
        Ok(completed)
    }
    // ANCHOR_END: complete
}

/// A key given back or completed by the completer after another attempt took it over (the
/// completer was fenced out): there is nothing to do, the attempt that holds it ends it.
fn owned(ended: Result<(), retrykey_http::Error>) -> Result<(), retrykey_http::Error> {
    match ended {
        Ok(()) | Err(retrykey_http::Error::NotOwner) => Ok(()),
        Err(error) => Err(error),
    }
}

/// The entry's digest as the layer's `entry` field shows it: its first six bytes, in hex.
fn digest(id: &EntryId) -> String {
    (id.as_bytes()[..6].iter())
        .map(|byte| format!("{byte:02x}"))
        .collect()
}
