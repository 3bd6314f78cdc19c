// Refused by outbox::dispatcher_crash_between_send_and_mark_redelivers: the mark follows the
// send at once, and the point where a crash may fall is put after it, where nothing is at risk.
pub fn deliver<'a>(
    courier: &'a Courier,
    claimed: &'a Claimed,
) -> BoxFuture<'a, Result<Delivery, Error>> {
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
        let delivery = courier.mark_delivered(claimed, acknowledgement).await;
        courier.at(Point::Sent);
        delivery
    })
}
