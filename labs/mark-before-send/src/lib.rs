// Mirrored by labs/mark-before-send: see labs/README.md before changing this file.
//! Delivering one claimed event: send it, hear the consumer acknowledge it, and only then mark
//! it delivered.
//!
//! The order is the whole point. The dispatcher cannot send and mark in one transaction: the
//! consumer is another process with another database. Whichever step comes first, a crash can
//! fall between the two. Sent first, the crash leaves an event that was received but still
//! looks pending, so it is sent again: *at least once*, and the consumer's dedup makes the
//! repeat harmless. Marked first, the crash leaves an event that looks delivered and never was.

use retrykey_client::Outcome;

use crate::Claimed;
// NEGATIVE: `Acknowledgement`, for the answer this copy records before it has one (below).
use crate::courier::{Acknowledgement, Courier, Delivering};
use crate::crash::Point;

// ANCHOR: deliver
/// Delivers `claimed`: one Stage 3 operation under the event's id, then the outbox is told
/// what came of it.
pub fn deliver<'a>(courier: &'a Courier, claimed: &'a Claimed) -> Delivering<'a> {
    Box::pin(async move {
        // NEGATIVE: the event is marked delivered first and sent second. A crash between the
        // two leaves an event that looks delivered and never reached the consumer: nothing will
        // ever send it again, and its job is never converted. And a consumer that is down, or
        // that refuses the event, changes nothing: the outbox already says "delivered".
        let unheard = Acknowledgement {
            conversion: None,
            replayed: false,
        };
        let marked = courier.mark_delivered(claimed, unheard).await?;
        courier.at(Point::Sent);
        match courier.send(&claimed.event).await {
            Outcome::Succeeded { .. } => Ok(marked),
            Outcome::Rejected { failure, .. } => courier.reject(claimed, &failure).await,
            Outcome::Unknown { last, stop, .. } => {
                courier.postpone(claimed, &format!("{last} ({stop})")).await
            }
        }
    })
}
// ANCHOR_END: deliver
