//! The outbox's statements on PostgreSQL. Each dispatcher write is one statement, so one round
//! trip in autocommit; the operator's actions read and change a row in one transaction.

use retrykey::Error;
use retrykey_durable::pg::storage;
use retrykey_pg::Connection;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{GenericClient, Row};

use crate::{Claimed, Event, EventId, EventRow, EventState, Marks, NewEvent};

/// Writes a job's outgoing event, pending and due at once.
pub async fn insert(db: &impl GenericClient, new: &NewEvent) -> Result<(), Error> {
    let event = &new.event;
    db.execute_typed(
        "INSERT INTO outbox (event_id, scope, operation, job, units, accepted_at, due_at)
         VALUES ($1, $2, $3, $4, $5, $6, $6)",
        &[
            (&event.id.as_str(), Type::TEXT),
            (&new.scope, Type::TEXT),
            (&event.operation.cast_signed(), Type::INT8),
            (&event.job, Type::TEXT),
            (&event.units.cast_signed(), Type::INT8),
            (&new.accepted_at_ms, Type::INT8),
        ],
    )
    .await
    .map_err(storage)?;
    Ok(())
}

/// The id of the event of job `operation` in `scope`, if it has one.
pub async fn event_of_job(
    db: &impl GenericClient,
    scope: &str,
    operation: u64,
) -> Result<Option<EventId>, Error> {
    let row = db
        .query_typed_opt(
            "SELECT event_id FROM outbox WHERE scope = $1 AND operation = $2",
            &[(&scope, Type::TEXT), (&operation.cast_signed(), Type::INT8)],
        )
        .await
        .map_err(storage)?;
    Ok(row.map(|row| EventId::from_stored(row.get::<_, String>(0))))
}

/// Claims up to `limit` due events that no live claim holds, for `owner` until `lease_until`,
/// each with a new fencing token from the sequence; rows another dispatcher is claiming at
/// this moment are skipped, not waited for. Prepared once per connection, as is every write
/// the dispatcher repeats: the server parses it once, not at every claim.
pub async fn claim(
    connection: &mut Connection,
    owner: &str,
    now: i64,
    lease_until: i64,
    limit: usize,
) -> Result<Vec<Claimed>, Error> {
    let rows = connection
        .all(CLAIM, &[&owner, &now, &lease_until, &(limit as i64)])
        .await
        .map_err(storage)?;
    let mut claimed: Vec<Claimed> = rows
        .iter()
        .map(|row| Claimed {
            event: event(row),
            delivery: row.get::<_, i32>(4).cast_unsigned(),
            token: row.get::<_, i64>(5).cast_unsigned(),
        })
        .collect();
    claimed.sort_by_key(|claimed| claimed.event.operation);
    Ok(claimed)
}

const CLAIM: &str = "UPDATE outbox o SET owner = $1::text, token = nextval('outbox_token'),
        lease_until = $3::int8, deliveries = o.deliveries + 1
    FROM (SELECT event_id FROM outbox
          WHERE state = 'pending' AND due_at <= $2::int8
            AND (lease_until IS NULL OR lease_until <= $2::int8)
          ORDER BY due_at, operation LIMIT $4::int8
          FOR UPDATE SKIP LOCKED) due
    WHERE o.event_id = due.event_id
    RETURNING o.event_id, o.operation, o.job, o.units, o.deliveries, o.token";

/// Marks the event of `claimed` delivered, only while the claim is still the event's current
/// one (see the SQLite `mark_delivered`). With [`Marks::Relaxed`] the mark goes in a
/// transaction whose commit does not wait for the disk: `BEGIN`, the mark and `COMMIT` in one
/// round trip, and a failed mark aborts the transaction, so the `COMMIT` behind it rolls back.
pub async fn mark_delivered(
    connection: &mut Connection,
    claimed: &Claimed,
    conversion: Option<u64>,
    now: i64,
    marks: Marks,
) -> Result<bool, Error> {
    let conversion = conversion.map(u64::cast_signed);
    match marks {
        Marks::Durable => settle(connection, MARK_DELIVERED, claimed, &[&now, &conversion]).await,
        Marks::Relaxed => {
            let (id, token) = fenced(claimed);
            let params: [&(dyn ToSql + Sync); 4] = [&id, &token, &now, &conversion];
            let statement = connection.prepared(MARK_DELIVERED).await.map_err(storage)?;
            let client = connection.client();
            // Requests go out in the order they are first polled.
            let (begun, marked, committed) = tokio::join!(
                biased;
                client.batch_execute("BEGIN; SET LOCAL synchronous_commit = off"),
                client.execute(&statement, &params),
                client.batch_execute("COMMIT"),
            );
            begun.map_err(storage)?;
            let marked = marked.map_err(storage)?;
            committed.map_err(storage)?;
            Ok(marked == 1)
        }
    }
}

const MARK_DELIVERED: &str =
    "UPDATE outbox SET state = 'delivered', settled_at = $3::int8, conversion = $4::int8,
             lease_until = NULL, last_error = NULL
         WHERE event_id = $1::text AND token = $2::int8 AND state = 'pending'";

/// Lets the claim go and makes the event due again at `due_at`. Fenced.
pub async fn postpone(
    connection: &mut Connection,
    claimed: &Claimed,
    error: &str,
    due_at: i64,
) -> Result<bool, Error> {
    settle(
        connection,
        "UPDATE outbox SET lease_until = NULL, due_at = $3::int8, last_error = $4::text
         WHERE event_id = $1::text AND token = $2::int8 AND state = 'pending'",
        claimed,
        &[&due_at, &error],
    )
    .await
}

/// Settles the event as rejected by the consumer. Fenced.
pub async fn mark_rejected(
    connection: &mut Connection,
    claimed: &Claimed,
    error: &str,
    now: i64,
) -> Result<bool, Error> {
    settle(
        connection,
        "UPDATE outbox SET state = 'rejected', settled_at = $3::int8, last_error = $4::text,
             lease_until = NULL
         WHERE event_id = $1::text AND token = $2::int8 AND state = 'pending'",
        claimed,
        &[&now, &error],
    )
    .await
}

/// Runs one fenced write, prepared: `$1` is the event, `$2` the claim's token, `more` the rest;
/// true if it changed the row.
async fn settle(
    connection: &mut Connection,
    statement: &'static str,
    claimed: &Claimed,
    more: &[&(dyn ToSql + Sync)],
) -> Result<bool, Error> {
    let (id, token) = fenced(claimed);
    let mut params: Vec<&(dyn ToSql + Sync)> = vec![&id, &token];
    params.extend_from_slice(more);
    let changed = connection
        .execute(statement, &params)
        .await
        .map_err(storage)?;
    Ok(changed == 1)
}

/// A fenced write's first two parameters: `$1` the event, `$2` the claim's token.
fn fenced(claimed: &Claimed) -> (&str, i64) {
    (claimed.event.id.as_str(), claimed.token.cast_signed())
}

/// The columns [`row`] reads, in its order.
const COLUMNS: &str = "event_id, operation, job, units, scope, accepted_at, state, due_at,
    deliveries, owner, token, lease_until, last_error, settled_at, conversion, reason";

/// The event `id`, as stored; with `lock`, its row stays locked until the transaction ends.
pub async fn find(
    db: &impl GenericClient,
    id: &str,
    lock: bool,
) -> Result<Option<EventRow>, Error> {
    let lock = if lock { " FOR UPDATE" } else { "" };
    let row = db
        .query_typed_opt(
            &format!("SELECT {COLUMNS} FROM outbox WHERE event_id = $1{lock}"),
            &[(&id, Type::TEXT)],
        )
        .await
        .map_err(storage)?;
    row.as_ref().map(row_of).transpose()
}

/// Every event the consumer has not acknowledged (pending, rejected or failed), oldest job first,
/// at most `limit`; failed events last, so that settled ones never crowd out those still open.
pub async fn not_delivered(db: &impl GenericClient, limit: usize) -> Result<Vec<EventRow>, Error> {
    let rows = db
        .query_typed(
            &format!(
                "SELECT {COLUMNS} FROM outbox WHERE state <> 'delivered'
                 ORDER BY state = 'failed', accepted_at, operation LIMIT $1"
            ),
            &[(&(limit as i64), Type::INT8)],
        )
        .await
        .map_err(storage)?;
    rows.iter().map(row_of).collect()
}

/// Every event, by job.
pub async fn all(db: &impl GenericClient) -> Result<Vec<EventRow>, Error> {
    let rows = db
        .query(
            &format!("SELECT {COLUMNS} FROM outbox ORDER BY scope, operation"),
            &[],
        )
        .await
        .map_err(storage)?;
    rows.iter().map(row_of).collect()
}

/// Makes the event `id` pending and due at `now`, with no claim: the operator's re-drive.
pub async fn redrive(db: &impl GenericClient, id: &str, now: i64) -> Result<(), Error> {
    db.execute_typed(
        "UPDATE outbox SET state = 'pending', due_at = $2, lease_until = NULL, token = NULL,
             settled_at = NULL
         WHERE event_id = $1",
        &[(&id, Type::TEXT), (&now, Type::INT8)],
    )
    .await
    .map_err(storage)?;
    Ok(())
}

/// Settles the event `id` as failed, for `reason`: the operator's decision.
pub async fn mark_failed(
    db: &impl GenericClient,
    id: &str,
    reason: &str,
    now: i64,
) -> Result<(), Error> {
    db.execute_typed(
        "UPDATE outbox SET state = 'failed', reason = $2, settled_at = $3, lease_until = NULL,
             token = NULL
         WHERE event_id = $1",
        &[(&id, Type::TEXT), (&reason, Type::TEXT), (&now, Type::INT8)],
    )
    .await
    .map_err(storage)?;
    Ok(())
}

/// Deletes the events delivered or marked failed before `before` whose job's ledger record is
/// gone; returns how many (see the SQLite `sweep`).
pub async fn sweep(db: &impl GenericClient, before: i64) -> Result<usize, Error> {
    let deleted = db
        .execute_typed(
            "DELETE FROM outbox WHERE state IN ('delivered', 'failed') AND settled_at < $1
               AND NOT EXISTS (SELECT 1 FROM operations o
                               WHERE o.scope = outbox.scope AND o.operation = outbox.operation)",
            &[(&before, Type::INT8)],
        )
        .await
        .map_err(storage)?;
    Ok(deleted as usize)
}

fn event(row: &Row) -> Event {
    Event {
        id: EventId::from_stored(row.get::<_, String>(0)),
        operation: row.get::<_, i64>(1).cast_unsigned(),
        job: row.get(2),
        units: row.get::<_, i64>(3).cast_unsigned(),
    }
}

fn row_of(row: &Row) -> Result<EventRow, Error> {
    let state: String = row.get(6);
    let state = EventState::from_name(&state)
        .ok_or_else(|| Error::Storage(format!("unknown event state {state:?}").into()))?;
    Ok(EventRow {
        event: event(row),
        scope: row.get(4),
        accepted_at_ms: row.get(5),
        state,
        due_at_ms: row.get(7),
        deliveries: row.get::<_, i32>(8).cast_unsigned(),
        owner: row.get(9),
        token: row.get::<_, Option<i64>>(10).map(i64::cast_unsigned),
        lease_until_ms: row.get(11),
        last_error: row.get(12),
        settled_at_ms: row.get(13),
        conversion: row.get::<_, Option<i64>>(14).map(i64::cast_unsigned),
        reason: row.get(15),
    })
}
