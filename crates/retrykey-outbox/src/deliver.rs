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
use crate::courier::{Courier, Delivering};
use crate::crash::Point;

// ANCHOR: deliver
/// Delivers `claimed`: one Stage 3 operation under the event's id, then the outbox is told
/// what came of it.
pub fn deliver<'a>(courier: &'a Courier, claimed: &'a Claimed) -> Delivering<'a> {
    Box::pin(async move {
        let acknowledgement = match courier.send(&claimed.event).await {
            Outcome::Succeeded {
                value, replayed, ..
            } => courier.acknowledgement(&value, replayed),
            Outcome::Rejected { failure, .. } => return courier.reject(claimed, &failure).await,
            Outcome::Unknown { last, stop, .. } => {
                return courier.postpone(claimed, &format!("{last} ({stop})")).await;
            }
        };
        // The consumer has the event and said so; the outbox does not know yet. A crash here
        // means the event is sent again, which the consumer answers from its record.
        courier.at(Point::Sent);
        courier.mark_delivered(claimed, acknowledgement).await
    })
}
// ANCHOR_END: deliver
