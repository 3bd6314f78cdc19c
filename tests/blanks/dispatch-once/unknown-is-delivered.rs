// Refused by outbox::delivered_only_after_acknowledgement: an unknown outcome is taken for a
// success (the consumer probably got it), so an event sent while the consumer is down is
// marked delivered and never sent again.
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
            Outcome::Unknown { .. } => retrykey_outbox::courier::Acknowledgement {
                conversion: None,
                replayed: false,
            },
        };
        // The consumer has the event and said so; the outbox does not know yet. A crash here
        // means the event is sent again, which the consumer answers from its record.
        courier.at(Point::Sent);
        courier.mark_delivered(claimed, acknowledgement).await
    })
}
