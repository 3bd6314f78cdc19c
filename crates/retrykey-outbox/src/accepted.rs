//! What accepting a job answers, and the event it writes.

use retrykey::{Receipt, Request};
use serde::Serialize;

use crate::{Event, EventId};

/// An accepted job: the ledger's receipt (its operation number is the job's number) and the id
/// of its outgoing event. A retry with the same key gets the same answer, marked replayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    /// The ledger's receipt for the job.
    pub receipt: Receipt,
    /// The job's outgoing event.
    pub event: EventId,
}

/// The event row a job's transaction writes beside the job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NewEvent {
    /// The event.
    pub event: Event,
    /// The ledger scope of the job.
    pub scope: String,
    /// When the job was accepted, in ms since the Unix epoch.
    pub accepted_at_ms: i64,
}

impl NewEvent {
    /// The outgoing event `id` of the job `job`, accepted as `receipt` in `scope` at `now_ms`.
    pub fn for_job(
        id: &EventId,
        scope: &str,
        receipt: Receipt,
        job: &Request,
        now_ms: i64,
    ) -> Self {
        Self {
            event: Event {
                id: id.clone(),
                operation: receipt.operation,
                job: job.job().to_owned(),
                units: job.units(),
            },
            scope: scope.to_owned(),
            accepted_at_ms: now_ms,
        }
    }
}
