// Refused by retry_suite::quota_bounds_retries_during_an_outage: retries cost nothing, so a
// dead service gets every operation's retries at once.
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
    if wait >= budget.remaining() {
        return Err(match retry_after {
            Some(_) => Stop::RetryAfterPastBudget,
            None => Stop::BudgetExhausted,
        });
    }
    let cost = 0;
    if !budget.try_spend_retry() {
        return Err(Stop::AttemptsExhausted);
    }
    Ok((wait, cost))
}
