// Refused by retry_suite::retry_after_past_the_budget_stops_early: the wait is slept whatever
// is left of the budget, so the operation sleeps until its deadline for nothing.
fn plan_retry<P: RetrySteps>(
    client: &Client<P>,
    budget: &Budget,
    failure: &Failure,
    number: u32,
) -> Result<(Duration, u32), Stop> {
    if number >= client.policy().max_attempts() || budget.retries_left() == 0 {
        return Err(Stop::AttemptsExhausted);
    }
    let retry_after = match failure {
        Failure::Status(status) => status.retry_after,
        _ => None,
    };
    let wait = retry_after.unwrap_or_else(|| client.next_delay(number));
    let cost = client
        .quota()
        .try_spend(failure)
        .ok_or(Stop::QuotaExhausted)?;
    if !budget.try_spend_retry() {
        return Err(Stop::AttemptsExhausted);
    }
    Ok((wait, cost))
}
