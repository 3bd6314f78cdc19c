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
use super::harness::{Arm, Harness, ServerReply};

const JOB: &str = "convert-document";
const ACKED: (&str, u64) = ("acked-1", 3);
const LOST: (&str, u64) = ("lost-1", 5);

/// What one scenario observed: one row of the crash matrix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowResult {
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

impl fmt::Display for RowResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.verdict {
            Ok(()) => write!(f, "ok"),
            Err(problem) => write!(f, "FAIL: {problem}"),
        }
    }
}

/// Runs the scenario for `point`.
pub fn run(harness: &dyn Harness, point: Point) -> RowResult {
    let mut row = RowResult {
        point,
        effects_after_crash: 0,
        effects_after_retry: 0,
        retry: None,
        verdict: Ok(()),
    };
    row.verdict = steps(harness, point, &mut row);
    row
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

fn steps(harness: &dyn Harness, point: Point, row: &mut RowResult) -> Result<(), String> {
    let original = Receipt {
        operation: 1,
        total: ACKED.1,
        replayed: false,
    };
    {
        let mut first = harness.start(Some(Arm { point, skip: 1 }))?;
        match first.apply(ACKED.0, JOB, ACKED.1) {
            ServerReply::Receipt(receipt) if receipt == original => {}
            other => return Err(format!("the first operation got {other:?}")),
        }
        match first.apply(LOST.0, JOB, LOST.1) {
            ServerReply::Crashed => {}
            other => return Err(format!("the process did not crash; it replied {other:?}")),
        }
    }

    let mut second = harness.start(None)?;
    let (total, _) = second.state()?;
    row.effects_after_crash = effects(total);
    if total < ACKED.1 {
        return Err(format!(
            "the acknowledged operation was lost: total {total}"
        ));
    }
    let retry = match second.apply(LOST.0, JOB, LOST.1) {
        ServerReply::Receipt(receipt) => receipt,
        other => return Err(format!("the retry got {other:?}")),
    };
    row.retry = Some(retry);
    let again = second.apply(ACKED.0, JOB, ACKED.1);
    let (total, records) = second.state()?;
    row.effects_after_retry = effects(total);

    if row.effects_after_retry != 1 {
        return Err(format!(
            "{} effects after the retry (total {total}), not 1",
            row.effects_after_retry
        ));
    }
    let expected = Receipt {
        operation: 2,
        total: ACKED.1 + LOST.1,
        replayed: row.effects_after_crash == 1,
    };
    if retry != expected {
        return Err(format!("the retry got {retry:?}, not {expected:?}"));
    }
    if again != ServerReply::Receipt(original.replay()) {
        return Err(format!("the acknowledged operation now gets {again:?}"));
    }
    if records != 2 {
        return Err(format!("{records} records, not 2"));
    }
    Ok(())
}
