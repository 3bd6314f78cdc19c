//! Bad policies are refused when they are built, with an error that names what is wrong.

use std::time::Duration;

use retrykey_client::{Error, Policy};

// A policy needs at least one attempt.
#[test]
fn zero_attempts_is_refused() {
    let built = Policy::builder().max_attempts(0).build();
    assert!(matches!(built, Err(Error::ZeroAttempts)), "{built:?}");
    assert_eq!(
        built.unwrap_err().to_string(),
        "a policy needs at least one attempt, got 0"
    );
}

// A zero budget leaves no time for any attempt.
#[test]
fn zero_budget_is_refused() {
    let built = Policy::builder().budget(Duration::ZERO).build();
    assert!(matches!(built, Err(Error::ZeroBudget)), "{built:?}");
    assert!(matches!(
        Policy::from_millis(3, 100, 2_000, 0),
        Err(Error::ZeroBudget)
    ));
}

// Negative durations from configuration name the setting and the value.
#[test]
fn negative_durations_are_refused() {
    for (setting, values) in [
        ("base", (-1, 2_000, 10_000)),
        ("cap", (100, -5, 10_000)),
        ("budget", (100, 2_000, -10_000)),
    ] {
        let (base, cap, budget) = values;
        let built = Policy::from_millis(3, base, cap, budget);
        let Err(Error::NegativeDuration {
            setting: named,
            millis,
        }) = built
        else {
            panic!("{setting}: expected a negative-duration error, got {built:?}");
        };
        assert_eq!(named, setting);
        assert!(millis < 0);
    }
    assert_eq!(
        Policy::from_millis(3, 100, 2_000, -1)
            .unwrap_err()
            .to_string(),
        "budget must not be negative, got -1 ms"
    );
}

// A cap below the base could never let the schedule grow as configured.
#[test]
fn cap_below_base_is_refused() {
    let built = Policy::builder()
        .base(Duration::from_millis(500))
        .cap(Duration::from_millis(100))
        .build();
    let Err(Error::CapBelowBase { base, cap }) = built else {
        panic!("expected cap-below-base, got {built:?}");
    };
    assert_eq!(
        (base, cap),
        (Duration::from_millis(500), Duration::from_millis(100))
    );
}

// A zero per-attempt timeout would fail every attempt before it starts.
#[test]
fn zero_attempt_timeout_is_refused() {
    let built = Policy::builder().attempt_timeout(Duration::ZERO).build();
    assert!(matches!(built, Err(Error::ZeroAttemptTimeout)), "{built:?}");
}

// A refused build leaves the builder's other settings as they were: fixing the one setting is enough.
#[test]
fn fixing_the_named_setting_is_enough() {
    let builder = Policy::builder().max_attempts(5).budget(Duration::ZERO);
    assert!(matches!(builder.build(), Err(Error::ZeroBudget)));
    let policy = builder.budget(Duration::from_secs(3)).build().unwrap();
    assert_eq!(
        (policy.max_attempts(), policy.budget()),
        (5, Duration::from_secs(3))
    );
}

// The defaults are the documented ones.
#[test]
fn defaults_are_documented_values() {
    let policy = Policy::default();
    assert_eq!(policy.max_attempts(), 3);
    assert_eq!(policy.base(), Duration::from_millis(100));
    assert_eq!(policy.cap(), Duration::from_secs(2));
    assert_eq!(policy.budget(), Duration::from_secs(10));
    assert_eq!(policy.attempt_timeout(), None);
    assert!(!policy.retry_500());
}

// A cap equal to the base is a constant ceiling, not a mistake: it builds.
#[test]
fn cap_equal_to_base_is_accepted() {
    let policy = Policy::builder()
        .base(Duration::from_millis(250))
        .cap(Duration::from_millis(250))
        .build()
        .expect("cap == base is a valid policy");
    assert_eq!(policy.base(), Duration::from_millis(250));
    assert_eq!(policy.cap(), Duration::from_millis(250));
}

// A layer that leaves retries to its caller keeps the caller's policy budget, with one attempt.
#[test]
fn single_attempt_keeps_the_budget() {
    let policy = Policy::builder()
        .max_attempts(5)
        .budget(Duration::from_millis(1_234))
        .build()
        .expect("a valid policy");
    let single = policy.single_attempt();
    assert_eq!(single.max_attempts(), 1);
    assert_eq!(single.budget(), Duration::from_millis(1_234));
}
