// Refused by retry_suite::nested_layers_share_one_budget: each layer starts a budget of its own,
// so nested layers multiply their attempts.
pub async fn execute<P, T, F, Fut>(
    client: &Client<P>,
    key: Option<Key>,
    parent: Option<Budget>,
    mut attempt: F,
) -> Outcome<T>
where
    P: RetrySteps,
    F: FnMut(Attempt) -> Fut,
    Fut: Future<Output = Result<Success<T>, Failure>>,
{
    let policy = *client.policy();
    let budget = Budget::start(&policy);
    // One identity for the whole operation, fixed before the first attempt.
    let key = key.unwrap_or_else(|| client.new_key());
    let mut may_have_applied = false;
    let mut last_retry_cost = None;
    let mut number = 0;
    loop {
        let remaining = budget.remaining();
        let allowed = policy
            .attempt_timeout()
            .map_or(remaining, |t| t.min(remaining));
        if allowed.is_zero() {
            return Outcome::Unknown {
                last: Failure::TimedOut,
                attempts: number,
                stop: Stop::BudgetExhausted,
                may_have_applied,
            };
        }
        number += 1;
        let context = Attempt {
            key: key.clone(),
            number,
            budget: budget.clone(),
        };
        let failure = match tokio::time::timeout(allowed, attempt(context)).await {
            Ok(Ok(reply)) => {
                client.quota().on_success(last_retry_cost);
                return Outcome::Succeeded {
                    value: reply.value,
                    replayed: reply.replayed,
                    attempts: number,
                };
            }
            Ok(Err(failure)) => failure,
            Err(_elapsed) => Failure::TimedOut,
        };
        may_have_applied |= failure.may_have_applied();

        let plan = match (P::classify(&failure, &policy), &failure) {
            (Verdict::Reject, Failure::Status(status)) => {
                return Outcome::Rejected {
                    failure: status.clone(),
                    attempts: number,
                };
            }
            (Verdict::Retry, _) => plan_retry(client, &budget, &failure, number),
            _ => Err(Stop::NotRetryable),
        };
        match plan {
            Ok((wait, cost)) => {
                last_retry_cost = Some(cost);
                // A zero wait retries at once: even a zero sleep would cost a timer tick.
                if !wait.is_zero() {
                    tokio::time::sleep(wait).await;
                }
            }
            Err(stop) => {
                return Outcome::Unknown {
                    last: failure,
                    attempts: number,
                    stop,
                    may_have_applied,
                };
            }
        }
    }
}
