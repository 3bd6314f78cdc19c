// Mirrored by labs/publish-outside-transaction: see labs/README.md before changing this file.
//! Accepting a job on SQLite: the job (its units and its record in the ledger) and its outgoing
//! event commit in one transaction, or neither does.
//!
//! The event is what makes the job's work happen elsewhere. Written in the job's transaction,
//! it exists exactly when the job does: a crash before the commit leaves neither, a crash after
//! it leaves both, and the dispatcher, which reads only committed rows, never sends an event for
//! a job that did not commit.

use retrykey::{Key, Request};

use crate::sqlite::{SqliteOutbox, events};
use crate::{Accepted, Error, EventId, NewEvent};

// ANCHOR: accept
/// Accepts `job` under `key`, with its event; a retry with the same key writes nothing and gets
/// the first answer.
pub fn accept(outbox: &SqliteOutbox, key: &Key, job: &Request) -> Result<Accepted, Error> {
    let (id, scope, now) = (EventId::random(), outbox.scope(), outbox.now_ms());
    // One more row of the job's own transaction, after its record, before its commit.
    let event = |tx: &rusqlite::Transaction<'_>, receipt| {
        events::insert(tx, &NewEvent::for_job(&id, scope, receipt, job, now))
    };
    let receipt = outbox.ledger().apply_with(key, job, &event)?;
    outbox.accepted(receipt, id)
}
// ANCHOR_END: accept
