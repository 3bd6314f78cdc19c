// Mirrored by labs/recovery-point-before-call: see labs/README.md before changing this file.
//! The checkout's phases: one operation, resumed from its last recovery point to its end.
//!
//! Each phase is one local transaction that ends at a recovery point ([`Books`](crate::Books));
//! the charge sits between two of them, under the key derived from the operation's own. A point
//! says what has happened, never what is about to: `charged` commits only once the provider has
//! answered with a charge, so an attempt that resumes there has nothing left to ask it.

use axum::response::{IntoResponse, Response};
use retrykey_http::Reservation;

use crate::answers::{declined, finished, paid, unavailable, uncommitted};
use crate::crash::Point as Crash;
use crate::{CheckoutParts, End, Point, Progress, ProviderAnswer, Purchase};

// ANCHOR: resume
/// Runs `purchase` under `fence` from its last recovery point to its end; or stops at an
/// outcome it cannot know yet, with a 503 that keeps the point for the next attempt.
pub async fn resume(parts: &CheckoutParts, fence: Reservation, purchase: Purchase) -> Response {
    let mut progress = match parts.books().start(fence, purchase).await {
        Ok(progress) => progress,
        Err(error) => return uncommitted(&error),
    };
    loop {
        progress = match progress.point {
            Point::OrderCreated => match charge(parts, fence, purchase, progress).await {
                Ok(next) => next,
                Err(response) => return response,
            },
            Point::Charged => return confirm(parts, fence, purchase, progress).await,
            Point::Finished => return finished(&progress),
        };
    }
}
// ANCHOR_END: resume

// ANCHOR: charge
/// The foreign call under the operation's derived key, then the phase that records its charge;
/// or, for a declined card, the operation's end.
async fn charge(
    parts: &CheckoutParts,
    fence: Reservation,
    purchase: Purchase,
    progress: Progress,
) -> Result<Progress, Response> {
    let key = parts.foreign_key(&purchase.id, "charge");

    let answered = parts.charge(key, progress.amount).await;
    parts.hooks().at(Crash::Called);
    let charge = match answered {
        ProviderAnswer::Charged(charge) => charge,
        ProviderAnswer::Refused(status) => {
            let end = End::Declined(declined(progress.order, status));
            return Err(finish(parts, fence, purchase, progress.order, end).await);
        }
        // The charge may or may not have happened: never guess. The next attempt asks again
        // under the same key, and the provider answers from its record if it charged.
        ProviderAnswer::Unknown => {
            return Err(unavailable("the provider's answer is not known yet"));
        }
    };
    let books = parts.books();
    (books.charged(fence, purchase.id, charge).await).map_err(|error| uncommitted(&error))?;
    Ok(Progress {
        point: Point::Charged,
        charge: Some(charge),
        ..progress
    })
}
// ANCHOR_END: charge

/// The last phase: the order paid, its shipment and the key's answer, in one commit.
async fn confirm(
    parts: &CheckoutParts,
    fence: Reservation,
    purchase: Purchase,
    progress: Progress,
) -> Response {
    let answer = paid(&progress);
    finish(parts, fence, purchase, progress.order, End::Paid(answer)).await
}

/// Ends the operation as `end` says, and answers with what it stored for the key.
async fn finish(
    parts: &CheckoutParts,
    fence: Reservation,
    purchase: Purchase,
    order: i64,
    end: End,
) -> Response {
    match parts.books().finish(fence, purchase.id, order, end).await {
        Ok(answer) => answer.response().into_response(),
        Err(error) => uncommitted(&error),
    }
}
