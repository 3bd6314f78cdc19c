//! The crash scenario, one per point: crash there, restart, retry with the same key, count.
//!
//! 1. A first life applies `acked-1` (3 units) and gets its receipt: an acknowledged operation.
//! 2. It then applies `lost-1` (5 units) and dies at the point, without replying.
//! 3. A second life reads the state (how many effects survived the crash), retries `lost-1`
//!    with the same key, and presents `acked-1` again.
//!
//! Pass: `lost-1` took effect exactly once (total 8, two records), its receipt is operation 2
//! with total 8 — a replay if and only if it had committed before the crash — and `acked-1`
//! still replays its original receipt.

use std::fmt;

use retrykey::Receipt;

use super::Point;
use super::harness::{Arm, Harness, Reply};

const JOB: &str = "convert-document";
const ACKED: (&str, u64) = ("acked-1", 3);
const LOST: (&str, u64) = ("lost-1", 5);

/// What one scenario observed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Where the first life crashed.
    pub point: Point,
    /// Effects of `lost-1` found right after the restart.
    pub effects_after_crash: u64,
    /// Effects of `lost-1` after the retry.
    pub effects_after_retry: u64,
    /// The receipt the retry got.
    pub retry: Option<Receipt>,
    /// `Ok` when every expectation held; otherwise what went wrong.
    pub verdict: Result<(), String>,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.verdict {
            Ok(()) => write!(f, "ok"),
            Err(problem) => write!(f, "FAIL: {problem}"),
        }
    }
}

/// Runs the scenario for `point`.
pub fn run(harness: &dyn Harness, point: Point) -> Outcome {
    let mut outcome = Outcome {
        point,
        effects_after_crash: 0,
        effects_after_retry: 0,
        retry: None,
        verdict: Ok(()),
    };
    outcome.verdict = steps(harness, point, &mut outcome);
    outcome
}

/// The scenario as a check: `Err` says what went wrong.
pub fn check(harness: &dyn Harness, point: Point) -> Result<(), String> {
    run(harness, point)
        .verdict
        .map_err(|problem| format!("crash at {point}: {problem}"))
}

fn effects(total: u64) -> u64 {
    total.saturating_sub(ACKED.1) / LOST.1
}

fn steps(harness: &dyn Harness, point: Point, outcome: &mut Outcome) -> Result<(), String> {
    let original = Receipt {
        operation: 1,
        total: ACKED.1,
        replayed: false,
    };
    {
        let mut first = harness.start(Some(Arm { point, skip: 1 }))?;
        match first.apply(ACKED.0, JOB, ACKED.1) {
            Reply::Receipt(receipt) if receipt == original => {}
            other => return Err(format!("the first operation got {other:?}")),
        }
        match first.apply(LOST.0, JOB, LOST.1) {
            Reply::Crashed => {}
            other => return Err(format!("the process did not crash; it replied {other:?}")),
        }
    }

    let mut second = harness.start(None)?;
    let (total, _) = second.state()?;
    outcome.effects_after_crash = effects(total);
    if total < ACKED.1 {
        return Err(format!(
            "the acknowledged operation was lost: total {total}"
        ));
    }
    let retry = match second.apply(LOST.0, JOB, LOST.1) {
        Reply::Receipt(receipt) => receipt,
        other => return Err(format!("the retry got {other:?}")),
    };
    outcome.retry = Some(retry);
    let again = second.apply(ACKED.0, JOB, ACKED.1);
    let (total, records) = second.state()?;
    outcome.effects_after_retry = effects(total);

    if outcome.effects_after_retry != 1 {
        return Err(format!(
            "{} effects after the retry (total {total}), not 1",
            outcome.effects_after_retry
        ));
    }
    let expected = Receipt {
        operation: 2,
        total: ACKED.1 + LOST.1,
        replayed: outcome.effects_after_crash == 1,
    };
    if retry != expected {
        return Err(format!("the retry got {retry:?}, not {expected:?}"));
    }
    if again != Reply::Receipt(original.replay()) {
        return Err(format!("the acknowledged operation now gets {again:?}"));
    }
    if records != 2 {
        return Err(format!("{records} records, not 2"));
    }
    Ok(())
}

/// Every point's scenario, named as the suite names them (`crash::after_effect`, ...), each on
/// a fresh harness made by `make`.
pub fn run_all<H: Harness>(make: impl Fn() -> H) -> Vec<(&'static str, Result<(), String>)> {
    Point::ALL
        .into_iter()
        .map(|point| (test_name(point), check(&make(), point)))
        .collect()
}

/// The test name of `point`'s scenario.
pub fn test_name(point: Point) -> &'static str {
    match point {
        Point::BeforeEffect => "crash::before_effect",
        Point::AfterEffect => "crash::after_effect",
        Point::AfterRecord => "crash::after_record",
        Point::AfterCommit => "crash::after_commit",
    }
}

/// Turns the crash scenarios into `#[test]`s in a module named `crash`, one per point.
///
/// `$make` is an expression that returns a fresh [`Harness`] over a fresh database each time it
/// is evaluated. `crash_suite!(#[attribute] make)` puts the attribute on every test, as the
/// contract suites do (for PostgreSQL: ignored without a server).
#[macro_export]
macro_rules! crash_suite {
    (#[$attr:meta] $make:expr) => {
        mod crash {
            #[allow(unused_imports)]
            use super::*;

            fn check(point: $crate::crash::Point) {
                let harness = $make;
                if let Err(problem) = $crate::crash::scenario::check(&harness, point) {
                    panic!("{problem}");
                }
            }

            #[$attr]
            #[test]
            fn before_effect() {
                check($crate::crash::Point::BeforeEffect);
            }

            #[$attr]
            #[test]
            fn after_effect() {
                check($crate::crash::Point::AfterEffect);
            }

            #[$attr]
            #[test]
            fn after_record() {
                check($crate::crash::Point::AfterRecord);
            }

            #[$attr]
            #[test]
            fn after_commit() {
                check($crate::crash::Point::AfterCommit);
            }
        }
    };
    ($make:expr) => {
        $crate::crash_suite!(
            #[cfg_attr(any(), ignore)]
            $make
        );
    };
}
