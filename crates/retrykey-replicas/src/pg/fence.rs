//! The fenced writes on PostgreSQL: each one goes through only while its token is still the
//! key's current one.
//!
//! As in `sqlite/fence.rs`: a replica paused past its lease wakes up believing it owns the key;
//! a takeover gave the key a higher token, so its writes change nothing. Here the check is the
//! first part of the very statement that writes, and locks the row (`FOR UPDATE`) until the
//! transaction ends, so no takeover can slip in between the check and the write.

use retrykey_http::{EntryId, Token};
use tokio_postgres::types::ToSql;
use tokio_postgres::{GenericClient, Statement};

use crate::pg::pool::{Connection, PgResult};
use crate::pg::usage;
use crate::store::StoredAnswer;

/// Locks the key's (`$1`) row where it is in flight under the token (`$2`), until the
/// transaction ends: the fence of a phase that commits without the answer. No row when the token
/// no longer holds the key; a takeover that comes later waits for the phase's commit.
pub(crate) const HELD: &str = "SELECT 1 FROM http_keys
     WHERE entry_id = $1 AND token = $2::bigint AND expires_at IS NULL
     FOR UPDATE";

/// Stores the answer (`$3`–`$8`) of the key (`$1`) as the key's, fenced by the token (`$2`):
/// first `held`, the key's row where it is in flight under the token, locked until the commit;
/// then the answer, stored only where `held` has a row, and its bytes counted on a usage row
/// (`$9` the key's own, `$10` how many there are). No row when the token no longer holds the
/// key: then nothing changed. Key row first, usage row last: the lock order of usage.rs.
///
/// The bytes count only as a sum over the rows, so they go to the first usage row from the
/// key's own that no other transaction holds: a claim holds its row until its commit is
/// flushed, and waiting for it here would add that flush to this one. Only when every row is
/// held does it wait, for the key's own.
pub(crate) const FINISH: &str = "WITH held AS (
         SELECT entry_id, token FROM http_keys
         WHERE entry_id = $1 AND token = $2::bigint AND expires_at IS NULL
         FOR UPDATE),
     answered AS (
         UPDATE http_keys
         SET status = $3::integer, headers = $4, body = $5, whole = $6,
             size = $7::bigint, expires_at = $8::bigint, lease_until = NULL
         WHERE entry_id = $1 AND EXISTS (SELECT 1 FROM held)
         RETURNING 1),
     counted AS (
         UPDATE http_keys_usage SET bytes = bytes + $7::bigint
         WHERE shard = coalesce(
                 (SELECT shard FROM http_keys_usage
                  WHERE EXISTS (SELECT 1 FROM answered)
                  ORDER BY (shard - $9 + $10) % $10
                  LIMIT 1
                  FOR UPDATE SKIP LOCKED),
                 $9)
           AND EXISTS (SELECT 1 FROM answered))
     SELECT 1 FROM held";

/// Runs `statement`, [`FINISH`] prepared, on `client`: on a connection it is a transaction of
/// its own, one round trip; in a transaction it joins it. Whether the fence let it through.
pub(crate) async fn answer_in(
    client: &impl GenericClient,
    statement: &Statement,
    (id, token): (&EntryId, Token),
    answer: &StoredAnswer,
) -> PgResult<bool> {
    let columns = &answer.columns;
    let key = id.as_bytes().as_slice();
    let fixed: [&(dyn ToSql + Sync); 10] = [
        &key,
        &token.0.cast_signed(),
        &columns.status,
        &columns.headers,
        &columns.body,
        &columns.whole,
        &columns.size,
        &answer.expires_at,
        &usage::shard_of(id),
        &usage::SHARDS,
    ];
    Ok(client.query_opt(statement, &fixed).await?.is_some())
}

/// Stores the answer of the attempt holding `token`, making the entry finished until its
/// retention ends. False when the token no longer holds the key, unless its answer is stored
/// already under that very token: a handler that shares this database may have stored it in
/// the transaction of its effect (see `commit.rs`), in another process that has since died.
pub(crate) async fn finish(
    conn: &mut Connection,
    id: &EntryId,
    token: Token,
    answer: &StoredAnswer,
) -> PgResult<bool> {
    let statement = conn.prepared(FINISH).await?;
    if answer_in(conn.client(), &statement, (id, token), answer).await? {
        return Ok(true);
    }
    let found = conn
        .opt(
            "SELECT token FROM http_keys WHERE entry_id = $1 AND expires_at IS NOT NULL",
            &[&id.as_bytes().as_slice()],
        )
        .await?;
    Ok(found.map(|row| row.get::<_, i64>(0)) == Some(token.0.cast_signed()))
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
