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

use retrykey_http::{Entries, EntryId, Error, Fingerprint, Lookup, Reservation, Reserve};

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
    Ok(match entries.lookup(operation).await? {
        Lookup::Absent => match entries.reserve(operation, fingerprint).await? {
            Reserve::Reserved(token) => Claim::Held(Reservation {
                id: *operation,
                token,
            }),
            Reserve::Taken | Reserve::Full => Claim::Running,
        },
        Lookup::InFlight { .. } => Claim::Running,
        Lookup::Done { .. } => Claim::Done,
    })
}
// ANCHOR_END: claim
