//! The operator's view: every operation whose outcome is still uncertain, with its age and owner.
//!
//! The dispatcher and the consumer settle almost everything on their own. What they cannot
//! settle waits here, in three lists:
//!
//! - **keys in flight past their lease**: events a dispatcher claimed (their key in flight at
//!   that dispatcher) and stopped holding without settling them: it died, or it is stuck. The
//!   next claim takes them over; listed, an operator sees which dispatcher to look at.
//! - **undelivered after a threshold**: events of jobs accepted longer ago than the threshold
//!   and still not acknowledged (pending, or rejected by the consumer).
//! - **converted, not acknowledged**: events the consumer's records say it converted, which
//!   the outbox does not show as delivered (pending, rejected, or even marked failed): the effect
//!   happened, the acknowledgement was lost. Only with the consumer's database at hand.
//!
//! The actions (`retrykey_outbox::action`) are "re-drive" (deliver again now; a converted
//! event then gets its acknowledgement recorded) and "mark failed" with a reason.
//!
//! Both functions here wait for the outbox's calls ([`retrykey_outbox::store::wait`]): call
//! them from code that is not async.

use std::time::Duration;

use retrykey_converter::ConverterDb;
use retrykey_outbox::event::millis;
use retrykey_outbox::store::{OutboxStore, wait};
use retrykey_outbox::{Acted, ActionError, EventId, EventRow, EventState};
use serde::Serialize;

use crate::Error;

/// How old an undelivered job must be to be listed, unless told otherwise.
pub const DEFAULT_UNDELIVERED_AFTER: Duration = Duration::from_secs(60);

/// The most events the report reads: a long outage can leave many, and a person reads the first.
pub const MAX_LISTED: usize = 1_000;

/// One uncertain operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Uncertain {
    /// The event, whose id is the delivery's operation key.
    pub event: EventId,
    /// The job's number.
    pub operation: u64,
    /// The job name.
    pub job: String,
    /// Where the event stands in the outbox.
    pub state: EventState,
    /// Since the job was accepted (the first two lists) or converted (the third), in ms.
    pub age_ms: i64,
    /// The dispatcher that claimed it last, if any did.
    pub owner: Option<String>,
    /// How many times it was claimed.
    pub deliveries: u32,
    /// For a claim past its lease: how long ago the lease lapsed, in ms.
    pub lease_lapsed_ms: Option<i64>,
    /// Why its last delivery did not end in an acknowledgement.
    pub last_error: Option<String>,
    /// The consumer's conversion number, where its records show one.
    pub conversion: Option<u64>,
}

/// Everything uncertain at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The moment, in ms since the Unix epoch.
    pub now_ms: i64,
    /// The threshold of the second list, in ms.
    pub undelivered_after_ms: i64,
    /// Claims whose lease lapsed without the event being settled.
    pub keys_in_flight_past_lease: Vec<Uncertain>,
    /// Jobs older than the threshold whose events are not delivered (claims past their lease
    /// aside: they are in the first list).
    pub undelivered: Vec<Uncertain>,
    /// Conversions without an acknowledgement; `None` when the consumer's database was not
    /// given.
    pub converted_not_acknowledged: Option<Vec<Uncertain>>,
}

impl Report {
    /// Whether nothing at all is uncertain.
    pub fn is_clear(&self) -> bool {
        self.keys_in_flight_past_lease.is_empty()
            && self.undelivered.is_empty()
            && self
                .converted_not_acknowledged
                .as_ref()
                .is_none_or(Vec::is_empty)
    }
}

/// Reads the report from the outbox and, if given, the consumer's database.
pub fn report(
    outbox: &dyn OutboxStore,
    consumer: Option<&ConverterDb>,
    undelivered_after: Duration,
) -> Result<Report, Error> {
    let now = outbox.now_ms();
    // Every event without an acknowledgement: the first two lists take the pending and rejected
    // ones; the third looks at the failed ones too, since a dispatcher that was only paused may
    // have sent an event after an operator marked it failed.
    let unacknowledged = wait(outbox.not_delivered(MAX_LISTED))?;
    let threshold = millis(undelivered_after);
    let mut report = Report {
        now_ms: now,
        undelivered_after_ms: threshold,
        keys_in_flight_past_lease: Vec::new(),
        undelivered: Vec::new(),
        converted_not_acknowledged: None,
    };
    for row in &unacknowledged {
        let lapsed = row
            .lease_until_ms
            .filter(|&end| end <= now)
            .map(|end| now - end);
        if row.state == EventState::Pending && lapsed.is_some() {
            let mut item = uncertain(row, now - row.accepted_at_ms);
            item.lease_lapsed_ms = lapsed;
            report.keys_in_flight_past_lease.push(item);
        } else if row.state != EventState::Failed && now - row.accepted_at_ms >= threshold {
            report
                .undelivered
                .push(uncertain(row, now - row.accepted_at_ms));
        }
    }
    if let Some(consumer) = consumer {
        let ids: Vec<String> = unacknowledged
            .iter()
            .map(|row| row.event.id.to_string())
            .collect();
        let processed = consumer.processed(&ids)?;
        let mut converted = Vec::new();
        for done in processed {
            if let Some(row) = unacknowledged
                .iter()
                .find(|row| row.event.id.as_str() == done.event)
            {
                let mut item = uncertain(row, now - done.converted_at_ms);
                item.conversion = Some(done.conversion);
                converted.push(item);
            }
        }
        report.converted_not_acknowledged = Some(converted);
    }
    Ok(report)
}

fn uncertain(row: &EventRow, age_ms: i64) -> Uncertain {
    Uncertain {
        event: row.event.id.clone(),
        operation: row.event.operation,
        job: row.event.job.clone(),
        state: row.state,
        age_ms,
        owner: row.owner.clone(),
        deliveries: row.deliveries,
        lease_lapsed_ms: None,
        last_error: row.last_error.clone(),
        conversion: row.conversion,
    }
}

/// Marks event `id` failed for `reason`, unless the consumer's records (when given) show that it
/// was converted: then the right action is a re-drive, which records the acknowledgement.
pub fn mark_failed(
    outbox: &dyn OutboxStore,
    consumer: Option<&ConverterDb>,
    id: &str,
    reason: &str,
) -> Result<Result<Acted, ActionError>, Error> {
    if let Some(consumer) = consumer {
        let processed = consumer.processed(&[id.to_owned()])?;
        if let Some(done) = processed.first() {
            return Ok(Err(ActionError::Converted {
                event: EventId::from_stored(id),
                conversion: done.conversion,
            }));
        }
    }
    Ok(wait(outbox.mark_failed(id, reason))?)
}
