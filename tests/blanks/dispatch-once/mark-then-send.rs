// Refused by outbox::delivered_only_after_acknowledgement: the event is marked delivered before
// it is sent, so that a crash after the send cannot send it twice; a consumer that is down
// then leaves an event that looks delivered and never was.
pub fn deliver<'a>(
    courier: &'a Courier,
    claimed: &'a Claimed,
) -> BoxFuture<'a, Result<Delivery, Error>> {
    Box::pin(async move {
        let heard_nothing_yet = retrykey_outbox::courier::Acknowledgement {
            conversion: None,
            replayed: false,
        };
        let marked = courier.mark_delivered(claimed, heard_nothing_yet).await?;
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
