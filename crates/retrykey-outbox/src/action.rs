//! The operator's two actions on an uncertain event, decided once for both backends.
//!
//! Each action is idempotent: taking it twice leaves the event as taking it once did, and the
//! second time reports that nothing changed. Each refuses, changing nothing, where it would
//! contradict what is known: an event that was delivered, marked failed, or is being delivered
//! right now.

use serde::Serialize;

use crate::event::MAX_REASON_CHARS;
use crate::{ActionError, EventRow, EventState};

/// What an action did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Acted {
    /// Whether the event changed; `false` when it already was as the action leaves it.
    pub changed: bool,
    /// The event afterwards.
    pub event: EventRow,
}

/// Checks an operator's reason for marking an event failed.
pub fn check_reason(reason: &str) -> Result<(), ActionError> {
    let chars = reason.chars().count();
    let blank = reason.trim().is_empty();
    if blank || chars > MAX_REASON_CHARS || reason.chars().any(char::is_control) {
        return Err(ActionError::BadReason);
    }
    Ok(())
}

/// Whether re-driving `row` at `now_ms` changes it: `Ok(true)` makes it due now (a rejected
/// event becomes pending again, a lapsed claim is let go); `Ok(false)` means it is already due
/// and unclaimed.
pub fn redrive(row: &EventRow, now_ms: i64) -> Result<bool, ActionError> {
    settled_or_claimed(row, now_ms)?;
    Ok(match row.state {
        EventState::Rejected => true,
        _ => row.due_at_ms > now_ms || row.lease_until_ms.is_some(),
    })
}

/// Whether marking `row` failed with `reason` at `now_ms` changes it: `Ok(false)` when it was
/// already marked failed for this very reason.
pub fn mark_failed(row: &EventRow, reason: &str, now_ms: i64) -> Result<bool, ActionError> {
    check_reason(reason)?;
    if row.state == EventState::Failed && row.reason.as_deref() == Some(reason) {
        return Ok(false);
    }
    settled_or_claimed(row, now_ms)?;
    Ok(true)
}

/// Refuses an event that is settled for good, or that a dispatcher holds right now.
fn settled_or_claimed(row: &EventRow, now_ms: i64) -> Result<(), ActionError> {
    let event = row.event.id.clone();
    match row.state {
        EventState::Delivered => Err(ActionError::Delivered { event }),
        EventState::Failed => Err(ActionError::MarkedFailed {
            event,
            reason: row.reason.clone().unwrap_or_default(),
        }),
        _ if row.claimed_at(now_ms) => Err(ActionError::Claimed {
            event,
            owner: row.owner.clone().unwrap_or_default(),
            left_ms: row.lease_until_ms.unwrap_or(now_ms) - now_ms,
        }),
        _ => Ok(()),
    }
}

/// One of the operator's actions, as a backend carries it out: read the event, decide, write.
#[derive(Clone, Copy)]
pub(crate) enum OperatorAction<'a> {
    Redrive,
    Fail(&'a str),
}

impl OperatorAction<'_> {
    /// Whether the action changes `row` at `now`, or why it is refused.
    pub(crate) fn decide(self, row: &EventRow, now: i64) -> Result<bool, ActionError> {
        match self {
            OperatorAction::Redrive => redrive(row, now),
            OperatorAction::Fail(reason) => mark_failed(row, reason, now),
        }
    }
}
