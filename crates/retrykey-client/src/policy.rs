//! The retry policy: how many attempts, how long to wait between them, and one overall budget.

use std::time::Duration;

use crate::Error;

/// Attempts per operation by default: the first try and two retries.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;
/// First backoff ceiling by default; the ceiling doubles per retry.
pub const DEFAULT_BASE: Duration = Duration::from_millis(100);
/// Largest backoff ceiling by default.
pub const DEFAULT_CAP: Duration = Duration::from_secs(2);
/// Overall budget (deadline) of one operation by default, waits included.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(10);

/// A validated retry policy. Build it with [`Policy::builder`] or [`Policy::from_millis`].
///
/// The wait before retry `n` (1-based) is drawn uniformly from `0 ..= min(cap, base * 2^(n-1))`
/// ("full jitter"): clients that failed together spread out instead of retrying in lockstep.
///
/// ```
/// use std::time::Duration;
/// use retrykey_client::{Error, Policy};
///
/// let policy = Policy::builder().max_attempts(4).budget(Duration::from_secs(5)).build()?;
/// assert_eq!(policy.max_attempts(), 4);
/// assert!(matches!(Policy::builder().max_attempts(0).build(), Err(Error::ZeroAttempts)));
/// # Ok::<(), Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    max_attempts: u32,
    base: Duration,
    cap: Duration,
    budget: Duration,
    attempt_timeout: Option<Duration>,
    retry_500: bool,
}

impl Default for Policy {
    /// 3 attempts, base 100 ms, cap 2 s, budget 10 s, no per-attempt timeout, 500 not retried.
    fn default() -> Self {
        Self {
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            base: DEFAULT_BASE,
            cap: DEFAULT_CAP,
            budget: DEFAULT_BUDGET,
            attempt_timeout: None,
            retry_500: false,
        }
    }
}

impl Policy {
    /// A builder starting from [`Policy::default`].
    pub fn builder() -> PolicyBuilder {
        PolicyBuilder {
            policy: Self::default(),
        }
    }

    /// A policy from configuration values in milliseconds, where negative numbers can appear.
    ///
    /// ```
    /// use retrykey_client::{Error, Policy};
    ///
    /// let bad = Policy::from_millis(3, 100, 2_000, -1);
    /// assert!(matches!(bad, Err(Error::NegativeDuration { setting: "budget", millis: -1 })));
    /// ```
    pub fn from_millis(max_attempts: u32, base: i64, cap: i64, budget: i64) -> Result<Self, Error> {
        Self::builder()
            .max_attempts(max_attempts)
            .base(millis("base", base)?)
            .cap(millis("cap", cap)?)
            .budget(millis("budget", budget)?)
            .build()
    }

    /// One attempt within this policy's budget: for a layer that leaves retries to its caller.
    /// (Infallible: the budget was validated when this policy was built.)
    pub fn single_attempt(&self) -> Self {
        Self {
            max_attempts: 1,
            budget: self.budget,
            ..Self::default()
        }
    }

    /// Attempts per operation, the first one included.
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The first backoff ceiling.
    pub fn base(&self) -> Duration {
        self.base
    }

    /// The largest backoff ceiling.
    pub fn cap(&self) -> Duration {
        self.cap
    }

    /// The overall time allowed for one operation, waits included.
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// The most one attempt may take, if set; an attempt never gets more than the budget left.
    pub fn attempt_timeout(&self) -> Option<Duration> {
        self.attempt_timeout
    }

    /// Whether a plain 500 is retried (it is not by default: the service may have done part).
    pub fn retry_500(&self) -> bool {
        self.retry_500
    }
}

fn millis(setting: &'static str, value: i64) -> Result<Duration, Error> {
    u64::try_from(value)
        .map(Duration::from_millis)
        .map_err(|_| Error::NegativeDuration {
            setting,
            millis: value,
        })
}

/// Builds a [`Policy`]; [`PolicyBuilder::build`] rejects settings that cannot work.
#[derive(Clone, Copy, Debug)]
pub struct PolicyBuilder {
    policy: Policy,
}

impl PolicyBuilder {
    /// Attempts per operation, the first one included (at least 1).
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.policy.max_attempts = attempts;
        self
    }

    /// The first backoff ceiling.
    pub fn base(mut self, base: Duration) -> Self {
        self.policy.base = base;
        self
    }

    /// The largest backoff ceiling (not below `base`).
    pub fn cap(mut self, cap: Duration) -> Self {
        self.policy.cap = cap;
        self
    }

    /// The overall time allowed for one operation (positive).
    pub fn budget(mut self, budget: Duration) -> Self {
        self.policy.budget = budget;
        self
    }

    /// The most one attempt may take (positive); never more than the budget left.
    pub fn attempt_timeout(mut self, timeout: Duration) -> Self {
        self.policy.attempt_timeout = Some(timeout);
        self
    }

    /// Whether a plain 500 is retried. Only for services that promise a 500 changed nothing.
    pub fn retry_500(mut self, retry: bool) -> Self {
        self.policy.retry_500 = retry;
        self
    }

    /// Checks the settings: at least one attempt, a positive budget, a cap not below the base.
    pub fn build(self) -> Result<Policy, Error> {
        let policy = self.policy;
        if policy.max_attempts == 0 {
            return Err(Error::ZeroAttempts);
        }
        if policy.budget.is_zero() {
            return Err(Error::ZeroBudget);
        }
        if policy.cap < policy.base {
            return Err(Error::CapBelowBase {
                base: policy.base,
                cap: policy.cap,
            });
        }
        if policy.attempt_timeout == Some(Duration::ZERO) {
            return Err(Error::ZeroAttemptTimeout);
        }
        Ok(policy)
    }
}
