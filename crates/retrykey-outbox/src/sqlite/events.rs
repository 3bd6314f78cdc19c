//! The outbox's statements on SQLite: write an event, claim due ones, settle a delivery, and
//! what the operator reads and changes.
//!
//! Every function that writes runs inside a `BEGIN IMMEDIATE` transaction its caller holds, so
//! a claim's look at the due rows and its update cannot interleave with another dispatcher's,
//! in this process or another.

use crate::{Claimed, Event, EventId, EventRow, EventState, NewEvent};
use rusqlite::{Connection, OptionalExtension, Row, Transaction, params};

/// Writes a job's outgoing event, pending and due at once.
pub fn insert(tx: &Transaction<'_>, new: &NewEvent) -> rusqlite::Result<()> {
    let event = &new.event;
    tx.prepare_cached(
        "INSERT INTO outbox (event_id, scope, operation, job, units, accepted_at, due_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
    )?
    .execute(params![
        event.id.as_str(),
        new.scope,
        event.operation.cast_signed(),
        event.job,
        event.units.cast_signed(),
        new.accepted_at_ms,
    ])?;
    Ok(())
}

/// The id of the event of job `operation` in `scope`, if it has one.
pub fn event_of_job(
    conn: &Connection,
    scope: &str,
    operation: u64,
) -> rusqlite::Result<Option<EventId>> {
    conn.prepare_cached("SELECT event_id FROM outbox WHERE scope = ?1 AND operation = ?2")?
        .query_row(params![scope, operation.cast_signed()], |row| {
            Ok(EventId::from_stored(row.get::<_, String>(0)?))
        })
        .optional()
}

/// Whether any event is due at `now` and not held by a live claim: [`claim`]'s condition,
/// read without a transaction.
pub fn any_due(conn: &Connection, now: i64) -> rusqlite::Result<bool> {
    conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM outbox
                        WHERE state = 'pending' AND due_at <= ?1
                          AND (lease_until IS NULL OR lease_until <= ?1))",
    )?
    .query_row(params![now], |row| row.get(0))
}

/// Claims up to `limit` events that are due at `now` and not held by a live claim, for
/// `owner` until `lease_until`, each with a new fencing token; the oldest due first.
pub fn claim(
    tx: &Transaction<'_>,
    owner: &str,
    now: i64,
    lease_until: i64,
    limit: usize,
) -> rusqlite::Result<Vec<Claimed>> {
    let due: Vec<(Event, u32)> = tx
        .prepare_cached(
            "SELECT event_id, operation, job, units, deliveries FROM outbox
             WHERE state = 'pending' AND due_at <= ?1
               AND (lease_until IS NULL OR lease_until <= ?1)
             ORDER BY due_at, operation LIMIT ?2",
        )?
        .query_map(params![now, limit as i64], |row| {
            Ok((event(row)?, row.get::<_, u32>(4)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut claimed = Vec::with_capacity(due.len());
    for (event, deliveries) in due {
        let token: i64 = tx
            .prepare_cached("UPDATE outbox_tokens SET last = last + 1 WHERE id = 0 RETURNING last")?
            .query_row([], |row| row.get(0))?;
        tx.prepare_cached(
            "UPDATE outbox SET owner = ?2, token = ?3, lease_until = ?4,
                 deliveries = deliveries + 1
             WHERE event_id = ?1",
        )?
        .execute(params![event.id.as_str(), owner, token, lease_until])?;
        claimed.push(Claimed {
            event,
            token: token.cast_unsigned(),
            delivery: deliveries + 1,
        });
    }
    Ok(claimed)
}

// ANCHOR: fence
/// Marks the event of `claimed` delivered, with the consumer's conversion number: only while
/// the claim is still the event's current one. False when another claim took it over (this
/// one's lease lapsed) or an operator settled it meanwhile: then nothing is written.
pub fn mark_delivered(
    tx: &Transaction<'_>,
    claimed: &Claimed,
    conversion: Option<u64>,
    now: i64,
) -> rusqlite::Result<bool> {
    let changed = tx
        .prepare_cached(
            "UPDATE outbox SET state = 'delivered', settled_at = ?3, conversion = ?4,
                 lease_until = NULL, last_error = NULL
             WHERE event_id = ?1 AND token = ?2 AND state = 'pending'",
        )?
        .execute(params![
            claimed.event.id.as_str(),
            claimed.token.cast_signed(),
            now,
            conversion.map(u64::cast_signed),
        ])?;
    Ok(changed == 1)
}
// ANCHOR_END: fence

/// Lets the claim go and makes the event due again at `due_at`, noting why this delivery did
/// not end in an acknowledgement. Fenced as [`mark_delivered`] is.
pub fn postpone(
    tx: &Transaction<'_>,
    claimed: &Claimed,
    error: &str,
    due_at: i64,
) -> rusqlite::Result<bool> {
    let changed = tx
        .prepare_cached(
            "UPDATE outbox SET lease_until = NULL, due_at = ?3, last_error = ?4
             WHERE event_id = ?1 AND token = ?2 AND state = 'pending'",
        )?
        .execute(params![
            claimed.event.id.as_str(),
            claimed.token.cast_signed(),
            due_at,
            error
        ])?;
    Ok(changed == 1)
}

/// Settles the event as rejected: the consumer refused it for good, and an operator must look.
/// Fenced as [`mark_delivered`] is.
pub fn mark_rejected(
    tx: &Transaction<'_>,
    claimed: &Claimed,
    error: &str,
    now: i64,
) -> rusqlite::Result<bool> {
    let changed = tx
        .prepare_cached(
            "UPDATE outbox SET state = 'rejected', settled_at = ?3, last_error = ?4,
                 lease_until = NULL
             WHERE event_id = ?1 AND token = ?2 AND state = 'pending'",
        )?
        .execute(params![
            claimed.event.id.as_str(),
            claimed.token.cast_signed(),
            now,
            error
        ])?;
    Ok(changed == 1)
}

/// The columns [`row`] reads, in its order.
const COLUMNS: &str = "event_id, operation, job, units, scope, accepted_at, state, due_at,
    deliveries, owner, token, lease_until, last_error, settled_at, conversion, reason";

/// The event `id`, as stored.
pub fn find(conn: &Connection, id: &str) -> rusqlite::Result<Option<EventRow>> {
    conn.prepare_cached(&format!("SELECT {COLUMNS} FROM outbox WHERE event_id = ?1"))?
        .query_row([id], row)
        .optional()
}

/// Every event the consumer has not acknowledged (pending, rejected or failed), oldest job first,
/// at most `limit`; failed events last, so that settled ones never crowd out those still open.
pub fn not_delivered(conn: &Connection, limit: usize) -> rusqlite::Result<Vec<EventRow>> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM outbox WHERE state <> 'delivered'
         ORDER BY state = 'failed', accepted_at, operation LIMIT ?1"
    ))?
    .query_map([limit as i64], row)?
    .collect()
}

/// Every event, by job: for tests and small demos.
pub fn all(conn: &Connection) -> rusqlite::Result<Vec<EventRow>> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM outbox ORDER BY scope, operation"
    ))?
    .query_map([], row)?
    .collect()
}

/// Makes the event `id` pending and due at `now`, with no claim: the operator's re-drive. The
/// claim's token goes too, so that a dispatcher that held the event and is only paused cannot
/// postpone or settle it when it wakes: the next claim starts afresh.
pub fn redrive(tx: &Transaction<'_>, id: &str, now: i64) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "UPDATE outbox SET state = 'pending', due_at = ?2, lease_until = NULL, token = NULL,
             settled_at = NULL
         WHERE event_id = ?1",
    )?
    .execute(params![id, now])?;
    Ok(())
}

/// Settles the event `id` as failed, for `reason`: the operator's decision, which no
/// dispatcher's token can overwrite.
pub fn mark_failed(tx: &Transaction<'_>, id: &str, reason: &str, now: i64) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "UPDATE outbox SET state = 'failed', reason = ?2, settled_at = ?3, lease_until = NULL,
             token = NULL
         WHERE event_id = ?1",
    )?
    .execute(params![id, reason, now])?;
    Ok(())
}

/// Deletes the events delivered or marked failed before `before` whose job's ledger record is
/// gone (swept after its retention window); returns how many. While the record is kept, a retry
/// of the job's key replays it, and its answer names the event, so the event stays too. Pending
/// and rejected events stay until they are settled.
pub fn sweep(tx: &Transaction<'_>, before: i64) -> rusqlite::Result<usize> {
    tx.prepare_cached(
        "DELETE FROM outbox WHERE state IN ('delivered', 'failed') AND settled_at < ?1
           AND NOT EXISTS (SELECT 1 FROM operations o
                           WHERE o.scope = outbox.scope AND o.operation = outbox.operation)",
    )?
    .execute([before])
}

fn event(row: &Row<'_>) -> rusqlite::Result<Event> {
    Ok(Event {
        id: EventId::from_stored(row.get::<_, String>(0)?),
        operation: row.get::<_, i64>(1)?.cast_unsigned(),
        job: row.get(2)?,
        units: row.get::<_, i64>(3)?.cast_unsigned(),
    })
}

fn row(row: &Row<'_>) -> rusqlite::Result<EventRow> {
    let state: String = row.get(6)?;
    Ok(EventRow {
        event: event(row)?,
        scope: row.get(4)?,
        accepted_at_ms: row.get(5)?,
        state: EventState::from_name(&state).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                6,
                rusqlite::types::Type::Text,
                format!("unknown event state {state:?}").into(),
            )
        })?,
        due_at_ms: row.get(7)?,
        deliveries: row.get(8)?,
        owner: row.get(9)?,
        token: row.get::<_, Option<i64>>(10)?.map(i64::cast_unsigned),
        lease_until_ms: row.get(11)?,
        last_error: row.get(12)?,
        settled_at_ms: row.get(13)?,
        conversion: row.get::<_, Option<i64>>(14)?.map(i64::cast_unsigned),
        reason: row.get(15)?,
    })
}
