// Mirrored by labs/publish-outside-transaction: see labs/README.md before changing this file.
//! Accepting a job on SQLite: the job (its units and its record in the ledger) and its outgoing
//! event commit in one transaction, or neither does.
//!
//! The event is what makes the job's work happen elsewhere. Written in the job's transaction,
//! it exists exactly when the job does: a crash before the commit leaves neither, a crash after
//! it leaves both, and the dispatcher, which reads only committed rows, never sends an event for
//! a job that did not commit.

// NEGATIVE: `Ledger`, for the plain `apply` this copy commits the job with (below).
use retrykey::{Key, Ledger, Request};

use crate::sqlite::{SqliteOutbox, events};
use crate::{Accepted, Error, EventId, NewEvent};

// ANCHOR: accept
/// Accepts `job` under `key`, with its event; a retry with the same key writes nothing and gets
/// the first answer.
pub fn accept(outbox: &SqliteOutbox, key: &Key, job: &Request) -> Result<Accepted, Error> {
    let (id, scope, now) = (EventId::random(), outbox.scope(), outbox.now_ms());
    // NEGATIVE: the job commits on its own, and its event is written afterwards, in a
    // transaction of its own. A crash between the two commits leaves an accepted job whose
    // event is never written, so its work never happens; and the client's retry finds the job's
    // record and writes no event either. (Writing the event first, before the job's
    // transaction, is the mirror image: a crash in between sends an event for a job that never
    // committed.)
    let receipt = outbox.ledger().apply(key, job)?;
    if !receipt.replayed {
        let new = NewEvent::for_job(&id, scope, receipt, job, now);
        outbox.write(|tx| events::insert(tx, &new))?;
    }
    outbox.accepted(receipt, id)
}
// ANCHOR_END: accept
