// Mirrored by labs/completer-without-fence: see labs/README.md before changing this file.
//! The completer's claim: how a process that finishes operations their clients left takes one.
//!
//! An operation stopped at a recovery point (its client got a 503 and never came back, or its
//! process died) is finished by a completer, which runs the same phases as the request would.
//! It must never run them beside an attempt of the same operation: the phases of two drivers
//! would interleave, and what one wrote the other would write again. So it takes the operation's
//! own key, as a retry of the request would: a reservation, with a token higher than any before
//! it. From then on the store refuses the phases of every older attempt (the fence), and a late
//! retry of the client finds the key in flight, waits, and is answered with the completer's
//! answer.

// NEGATIVE: `IdempotencyKey` and `Scope`, for the completer's own lock (below).
use retrykey_http::{
    Entries, EntryId, Error, Fingerprint, IdempotencyKey, Lookup, Reservation, Reserve, Scope,
};

use crate::Claim;

// ANCHOR: claim
/// Claims `operation`'s key in `entries` for a completer, with the fingerprint its request was
/// bound to: as a retry of that request would.
///
/// A held claim is an attempt, and the completer ends it as the layer ends one: `complete` once
/// its last phase stored the answer (the store then writes nothing more), `release` when it
/// cannot finish.
pub async fn claim(
    entries: &dyn Entries,
    operation: &EntryId,
    fingerprint: &Fingerprint,
) -> Result<Claim, Error> {
    // NEGATIVE: the completer takes a lock of its own, named for the operation, in place of
    // the operation's key. The lock keeps two completers apart, but not a completer and the
    // client's retry, which holds the operation's key: both drive the operation, and the
    // fence, which refuses only an older token of the same key, stops neither.
    let lock = crate::foreign_key(operation, "completer");
    let lock = IdempotencyKey::parse(lock.as_str().as_bytes()).expect("a derived key is valid");
    let lock = EntryId::new(&Scope::Caller("completer".into()), &lock);
    Ok(match entries.lookup(&lock).await? {
        Lookup::Absent => match entries.reserve(&lock, fingerprint).await? {
            Reserve::Reserved(token) => Claim::Held(Reservation { id: lock, token }),
            Reserve::Taken | Reserve::Full => Claim::Running,
        },
        Lookup::InFlight { .. } => Claim::Running,
        Lookup::Done { .. } => Claim::Done,
    })
}
// ANCHOR_END: claim
