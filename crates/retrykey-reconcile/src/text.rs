//! The report and the actions' answers as text for a person.

use std::fmt::Write as _;

use retrykey_outbox::output::age;
use retrykey_outbox::{Acted, EventRow, EventState};

use crate::{Report, Uncertain};

/// The report as text for a person: one section per list, a line per operation.
pub fn text(report: &Report) -> String {
    let mut out = String::new();
    past_lease(&mut out, &report.keys_in_flight_past_lease);
    undelivered(&mut out, report);
    converted(&mut out, report.converted_not_acknowledged.as_deref());
    if !report.is_clear() {
        let _ = writeln!(
            out,
            "actions: reconcile redrive EVENT (deliver again now), reconcile fail EVENT --reason TEXT"
        );
    }
    out
}

/// The first list: claims whose lease lapsed, with the dispatcher to look at.
fn past_lease(out: &mut String, lease: &[Uncertain]) {
    let _ = writeln!(
        out,
        "keys in flight past their lease: {}",
        count(lease.len())
    );
    for item in lease {
        let lapsed = item.lease_lapsed_ms.unwrap_or_default();
        let _ = writeln!(
            out,
            "  {}  job {}  {}  claimed by {}, lease lapsed {} ago, age {}, deliveries {}",
            item.event,
            item.operation,
            item.job,
            item.owner.as_deref().unwrap_or("-"),
            age(lapsed),
            age(item.age_ms),
            item.deliveries
        );
    }
}

/// The second list: old jobs not delivered, with why their last delivery did not settle.
fn undelivered(out: &mut String, report: &Report) {
    let _ = writeln!(
        out,
        "undelivered after {}: {}",
        age(report.undelivered_after_ms),
        count(report.undelivered.len())
    );
    for item in &report.undelivered {
        let _ = writeln!(
            out,
            "  {}  job {}  {}  {}, age {}, deliveries {}, last claimed by {}{}",
            item.event,
            item.operation,
            item.job,
            item.state,
            age(item.age_ms),
            item.deliveries,
            item.owner.as_deref().unwrap_or("-"),
            item.last_error
                .as_deref()
                .map(|error| format!(", last error: {error}"))
                .unwrap_or_default()
        );
    }
}

/// The third list, when the consumer's database was read: conversions never acknowledged.
fn converted(out: &mut String, converted: Option<&[Uncertain]>) {
    let Some(converted) = converted else {
        let _ = writeln!(
            out,
            "converted, not acknowledged: not checked (give --consumer-db)"
        );
        return;
    };
    let _ = writeln!(
        out,
        "converted, not acknowledged: {}",
        count(converted.len())
    );
    for item in converted {
        let _ = writeln!(
            out,
            "  {}  job {}  {}  conversion {} made {} ago, not acknowledged; last claimed by {}",
            item.event,
            item.operation,
            item.job,
            item.conversion.unwrap_or_default(),
            age(item.age_ms),
            item.owner.as_deref().unwrap_or("-")
        );
    }
}

/// What an action did, as text for a person.
pub fn acted_text(action: &str, acted: &Acted) -> String {
    let row = &acted.event;
    let what = if acted.changed {
        format!("{action}: event {} is now {}", row.event.id, describe(row))
    } else {
        format!(
            "{action}: event {} was already {}; nothing changed",
            row.event.id,
            describe(row)
        )
    };
    format!("{what}\n")
}

fn describe(row: &EventRow) -> String {
    match row.state {
        EventState::Pending => "pending, due now".to_owned(),
        EventState::Failed => format!(
            "failed ({})",
            row.reason.as_deref().unwrap_or("no reason given")
        ),
        state => state.to_string(),
    }
}

fn count(n: usize) -> String {
    if n == 0 {
        "none".to_owned()
    } else {
        n.to_string()
    }
}
