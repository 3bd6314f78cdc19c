// Mirrored by labs/retry-definitive-errors: see labs/README.md before changing this file.
//! The retry classification: which failures are transient, which answers are definitive.

use crate::{Failure, Policy, Verdict};

/// Decides whether `failure` is retried, final, or a reason to give up.
///
/// | failure | verdict | why |
/// |---|---|---|
/// | connection refused, timeout, connection lost | retry | transport trouble; the same key makes a repeat safe |
/// | 408, 429, 502, 503, 504 | retry | the service says "not now" |
/// | 409 while the key's first request is in progress | retry | "not yet", not "different request" |
/// | 500 | retry only if the policy says so | the service may have done part of the work |
/// | other 4xx (400, 409, 422, ...) | reject | the request itself is refused: a repeat gets the same answer |
/// | anything else | give up | no rule says it is safe |
///
/// ```
/// use retrykey_client::{Failure, Policy, StatusFailure, Verdict, classify::classify};
///
/// let policy = Policy::default();
/// assert_eq!(classify(&Failure::TimedOut, &policy), Verdict::Retry);
/// assert_eq!(classify(&Failure::Status(StatusFailure::new(422, "units")), &policy), Verdict::Reject);
/// ```
pub fn classify(failure: &Failure, policy: &Policy) -> Verdict {
    let answer = match failure {
        Failure::Refused(_) | Failure::TimedOut | Failure::Lost(_) => return Verdict::Retry,
        Failure::Status(answer) => answer,
    };
    match answer.status {
        408 | 429 | 502 | 503 | 504 => Verdict::Retry,
        409 if answer.in_progress => Verdict::Retry,
        500 if policy.retry_500() => Verdict::Retry,
        // NEGATIVE: every 4xx is treated as transient, so a 422 or a conflict is sent again
        // although the service has already answered no, and will answer no every time.
        400..=499 => Verdict::Retry,
        _ => Verdict::GiveUp,
    }
}
