//! The fenced writes on PostgreSQL: each one goes through only while its token is still the
//! key's current one.
//!
//! As in `sqlite/fence.rs`: a replica paused past its lease wakes up believing it owns the key;
//! a takeover gave the key a higher token, so its writes change nothing. Here the check also
//! locks the row (`FOR UPDATE`) until the transaction ends, so no takeover can slip in between
//! the check and the write that follows it.

use retrykey_http::{EntryId, Token};

use crate::pg::pool::{Connection, PgResult};
use crate::pg::usage;
use crate::record::ResponseColumns;

/// Begins a transaction and asks whether the attempt holding `token` still holds `id`: the row
/// is in flight under this very token. Locks the row for the rest of the transaction, so that it
/// stays true until the commit. `BEGIN` and the check travel together, in one round trip.
pub(crate) async fn begin_if_held(
    conn: &mut Connection,
    id: &EntryId,
    token: Token,
) -> PgResult<bool> {
    let held = conn
        .opt_after(
            "BEGIN",
            "SELECT 1 FROM http_keys
             WHERE entry_id = $1 AND token = $2::bigint AND expires_at IS NULL
             FOR UPDATE",
            &[&id.as_bytes().as_slice(), &token.0.cast_signed()],
        )
        .await?;
    Ok(held.is_some())
}

/// Begins a transaction and inserts a payment of `amount` under `id` and `token`, if the
/// attempt holding `token` still holds `id` (as [`begin_if_held`] asks, and locking the row the
/// same way); the payment's number, or `None` with nothing inserted. One round trip.
pub(crate) async fn insert_if_held(
    conn: &mut Connection,
    id: &EntryId,
    token: Token,
    amount: u64,
) -> PgResult<Option<i64>> {
    let inserted = conn
        .opt_after(
            "BEGIN",
            "WITH held AS (
                 SELECT entry_id, token FROM http_keys
                 WHERE entry_id = $2 AND token = $3::bigint AND expires_at IS NULL
                 FOR UPDATE)
             INSERT INTO payments (amount, entry_id, token)
             SELECT $1::bigint, entry_id, token FROM held
             RETURNING number",
            &[
                &amount.cast_signed(),
                &id.as_bytes().as_slice(),
                &token.0.cast_signed(),
            ],
        )
        .await?;
    Ok(inserted.map(|row| row.get(0)))
}

/// Stores the answer of an attempt, making the entry finished until `expires_at`, counts its
/// bytes on the key's usage row, and commits. Unfenced on its own: call it in a transaction
/// where [`begin_if_held`] or [`insert_if_held`] said yes.
pub(crate) async fn finish_and_commit(
    conn: &mut Connection,
    id: &EntryId,
    response: &ResponseColumns,
    expires_at: i64,
) -> PgResult<()> {
    // One statement, key row first and usage row second (the lock order of usage.rs), sent
    // with the COMMIT. The bytes count only as a sum over the rows, so they go to the first
    // usage row from the key's own that no other transaction holds: a claim holds its row until
    // its commit is flushed, and waiting for it here would add that flush to this one. Only
    // when every row is held does it wait, for the key's own.
    conn.execute_and_commit(
        "WITH answered AS (
             UPDATE http_keys
             SET status = $2::integer, headers = $3, body = $4, whole = $5, size = $6::bigint,
                 expires_at = $7::bigint, lease_until = NULL
             WHERE entry_id = $1
             RETURNING 1)
         UPDATE http_keys_usage SET bytes = bytes + $6::bigint
         WHERE shard = coalesce(
                 (SELECT shard FROM http_keys_usage
                  WHERE EXISTS (SELECT 1 FROM answered)
                  ORDER BY (shard - $8 + $9) % $9
                  LIMIT 1
                  FOR UPDATE SKIP LOCKED),
                 $8)
           AND EXISTS (SELECT 1 FROM answered)",
        &[
            &id.as_bytes().as_slice(),
            &response.status,
            &response.headers,
            &response.body,
            &response.whole,
            &response.size,
            &expires_at,
            &usage::shard_of(id),
            &usage::SHARDS,
        ],
    )
    .await?;
    Ok(())
}

/// Extends the lease of the attempt holding `token` to `lease_until`, in one statement that
/// checks the token itself. False when the token is no longer current: the attempt has ended,
/// or another replica has taken the key over.
pub(crate) async fn renew(
    conn: &mut Connection,
    id: &EntryId,
    token: Token,
    lease_until: i64,
) -> PgResult<bool> {
    let renewed = conn
        .execute(
            "UPDATE http_keys SET lease_until = $3::bigint
             WHERE entry_id = $1 AND token = $2::bigint AND expires_at IS NULL",
            &[
                &id.as_bytes().as_slice(),
                &token.0.cast_signed(),
                &lease_until,
            ],
        )
        .await?;
    Ok(renewed == 1)
}

/// Whether `id` is finished under `token` (its answer was stored with that very token).
pub(crate) async fn finished_by(
    conn: &mut Connection,
    id: &EntryId,
    token: Token,
) -> PgResult<bool> {
    let found = conn
        .opt(
            "SELECT token FROM http_keys WHERE entry_id = $1 AND expires_at IS NOT NULL",
            &[&id.as_bytes().as_slice()],
        )
        .await?;
    Ok(found.map(|row| row.get::<_, i64>(0)) == Some(token.0.cast_signed()))
}
