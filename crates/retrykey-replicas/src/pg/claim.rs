//! Claiming a key in PostgreSQL: a fresh reservation, or the takeover of one whose lease has
//! lapsed.
//!
//! SQLite serializes whole transactions; PostgreSQL serializes per row. Two claims of one key
//! meet on its row: `INSERT ... ON CONFLICT DO NOTHING` lets exactly one insert it (the other
//! waits for that insert to commit or roll back, then sees it), and `SELECT ... FOR UPDATE`
//! makes the look at an existing row and the takeover that follows one step that no other
//! claim, completion or charge of the key can interleave with.
//!
//! A fresh key, the common case, costs one round trip: one statement that inserts the row and
//! takes its room from one usage row, sent alone, so that it is a transaction of its own. It
//! either does the whole claim or fails, so what commits is a complete claim or nothing. On
//! the claims that sweep, it runs inside `BEGIN`, and the `COMMIT` goes with the sweep.
//! Whatever that statement could not settle (the key is there, or no single usage row has room)
//! takes the long way below, in a transaction of its own.

use retrykey_http::{EntryId, Fingerprint, Reserve, Token};

use tokio_postgres::error::SqlState;

use crate::pg::pool::{Connection, PgResult};
use crate::pg::schema::NO_ROOM;
use crate::pg::usage::{self, Credit};
use crate::store::ClaimTerms;

/// How many times a claim tries again when the row it conflicted with is gone by the time it
/// looks (released or swept in between). Each round means another transaction committed on
/// this key; past this, the claim answers `Taken` and the layer looks again.
const ROUNDS: usize = 8;

enum Outcome {
    /// A new row: it needs room.
    Fresh(i64),
    /// An existing row taken over, or refused: the entry count does not change.
    Settled(Reserve),
}

/// What the first statement of a claim did.
enum First {
    /// The row is in and its room taken from this usage row: only the commit is left.
    Reserved { token: i64, shard: i32 },
    /// No usage row had room to spare alone: the statement failed, nothing of it is left, and
    /// the claim takes the long way.
    NoRoom,
    /// The key has a row already.
    Conflict,
}

/// Claims `id` for a first attempt of the request fingerprinted `fingerprint`, in one
/// transaction of its own (the long way's follows a first that left nothing), sweeping `sweep`
/// expired records on the way (0: none); on `Full` nothing of the claim remains.
pub(crate) async fn claim(
    conn: &mut Connection,
    id: &EntryId,
    fingerprint: &Fingerprint,
    claim: &ClaimTerms<'_>,
    sweep: i64,
) -> PgResult<Reserve> {
    let insert_first = match first(conn, id, fingerprint, claim, sweep == 0).await? {
        First::Reserved { token, shard } => {
            // The sweep credits the usage row this claim holds already: no other lock is
            // waited for after it (see the lock order in usage.rs).
            if sweep > 0 {
                usage::sweep_into_and_commit(conn, shard, claim.now_ms, sweep).await?;
            }
            return Ok(Reserve::Reserved(Token(token.cast_unsigned())));
        }
        // Nothing of the statement remains, and no usage row is held: the long way locks
        // usage rows in shard order only.
        First::NoRoom => true,
        First::Conflict => false,
    };
    if sweep > 0 {
        // The statement's transaction is still open: aborted (no room), or holding nothing.
        conn.batch("ROLLBACK; BEGIN").await?;
    } else {
        conn.batch("BEGIN").await?;
    }
    let mut credit = Credit::default();
    let mut outcome = Outcome::Settled(Reserve::Taken);
    for round in 0..ROUNDS {
        if (insert_first || round > 0)
            && let Some(token) = insert(conn, id, fingerprint, claim).await?
        {
            outcome = Outcome::Fresh(token);
            break;
        }
        match look(conn, id, fingerprint, claim, &mut credit).await? {
            Some(settled) => {
                outcome = Outcome::Settled(settled);
                break;
            }
            None => continue, // gone, or deleted as expired: try the insert again
        }
    }
    // A few expired records go with every claim, so the store keeps up without any request
    // paying for a long backlog. After the key's own row: see the lock order in usage.rs.
    if sweep > 0 {
        credit.add(usage::sweep(conn, claim.now_ms, sweep).await?);
    }
    let reserve = settle_room(conn, id, outcome, credit, claim).await?;
    conn.batch("COMMIT").await?;
    Ok(reserve)
}

/// One statement, committed on its own when `commit`, else sent with a `BEGIN` and left open:
/// the key's row inserted with a new token unless the key has one, and one unit of room taken
/// from the first usage row with room that no other claim holds (as `usage::take_from_one_row`
/// does), only once the row is in. The room is looked for only after the insert, so the key's
/// row is locked before any usage row, as everywhere. A row inserted without room raises
/// `NO_ROOM`, which undoes the whole statement: `NoRoom`, with nothing left of it (and, without
/// `commit`, the transaction aborted).
async fn first(
    conn: &mut Connection,
    id: &EntryId,
    fingerprint: &Fingerprint,
    claim: &ClaimTerms<'_>,
    commit: bool,
) -> PgResult<First> {
    const FIRST: &str = "WITH inserted AS (
             INSERT INTO http_keys (entry_id, fingerprint, token, owner, lease_until)
             VALUES ($1, $2, nextval('http_keys_token'), $3, $4::bigint)
             ON CONFLICT (entry_id) DO NOTHING
             RETURNING token),
         took AS (
             UPDATE http_keys_usage SET room = room - 1
             WHERE shard = (
                 SELECT shard FROM http_keys_usage
                 WHERE EXISTS (SELECT 1 FROM inserted)
                   AND room - 1 >= 0
                   AND (SELECT min(room) >= 0 AND coalesce(sum(bytes), 0) < $6::bigint
                        FROM http_keys_usage)
                 ORDER BY (shard - $5 + $7) % $7
                 LIMIT 1
                 FOR UPDATE SKIP LOCKED)
             RETURNING shard)
         SELECT token, (SELECT shard FROM took),
                CASE WHEN NOT EXISTS (SELECT 1 FROM took) THEN http_keys_no_room() END
         FROM inserted";
    let max_bytes = i64::try_from(claim.limits.max_bytes).unwrap_or(i64::MAX);
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 7] = [
        &id.as_bytes().as_slice(),
        &fingerprint.as_bytes().as_slice(),
        &claim.owner,
        &(claim.now_ms + claim.lease_ms),
        &usage::shard_of(id),
        &max_bytes,
        &usage::SHARDS,
    ];
    let row = if commit {
        conn.opt(FIRST, &params).await
    } else {
        conn.opt_after("BEGIN", FIRST, &params).await
    };
    Ok(match row {
        Ok(Some(row)) => First::Reserved {
            token: row.get(0),
            shard: row.get(1),
        },
        Ok(None) => First::Conflict,
        Err(error) if error.code().map(SqlState::code) == Some(NO_ROOM) => First::NoRoom,
        Err(error) => return Err(error),
    })
}

/// Inserts `id`'s row with a new token, unless a row is there: the token, or `None`.
async fn insert(
    conn: &mut Connection,
    id: &EntryId,
    fingerprint: &Fingerprint,
    claim: &ClaimTerms<'_>,
) -> PgResult<Option<i64>> {
    let inserted = conn
        .opt(
            "INSERT INTO http_keys (entry_id, fingerprint, token, owner, lease_until)
             VALUES ($1, $2, nextval('http_keys_token'), $3, $4::bigint)
             ON CONFLICT (entry_id) DO NOTHING
             RETURNING token",
            &[
                &id.as_bytes().as_slice(),
                &fingerprint.as_bytes().as_slice(),
                &claim.owner,
                &(claim.now_ms + claim.lease_ms),
            ],
        )
        .await?;
    Ok(inserted.map(|row| row.get(0)))
}

/// Looks at the existing row of `id` under its lock and settles the claim on it: `Taken`, or a
/// takeover. `None` when the row is gone, or was expired and is deleted (its room credited):
/// the claim inserts again.
async fn look(
    conn: &mut Connection,
    id: &EntryId,
    fingerprint: &Fingerprint,
    claim: &ClaimTerms<'_>,
    credit: &mut Credit,
) -> PgResult<Option<Reserve>> {
    let key = id.as_bytes().as_slice();
    let Some(row) = conn
        .opt(
            "SELECT lease_until, expires_at, size FROM http_keys WHERE entry_id = $1
             FOR UPDATE",
            &[&key],
        )
        .await?
    else {
        return Ok(None); // gone since the insert conflicted
    };
    let now = claim.now_ms;
    let (lease, expires_at, size): (Option<i64>, Option<i64>, i64) =
        (row.get(0), row.get(1), row.get(2));
    Ok(Some(match (lease, expires_at) {
        // Finished and still kept: the caller replays it (it looked before the row was done).
        (_, Some(expires_at)) if expires_at > now => Reserve::Taken,
        // Finished and past retention: as good as gone. Delete it and insert afresh.
        (_, Some(_)) => {
            conn.execute("DELETE FROM http_keys WHERE entry_id = $1", &[&key])
                .await?;
            credit.forgot(size);
            return Ok(None);
        }
        // In flight, and its owner renewed the lease recently: it is working on it.
        (Some(lease), None) if lease > now => Reserve::Taken,
        // In flight, but the owner stopped renewing: it died, or it is paused.
        (_, None) => take_over(conn, id, fingerprint, claim).await?,
    }))
}

/// Takes over `id`, whose lease has lapsed, with a new token: if the old owner is only paused,
/// the token is what stops its writes when it wakes (fence.rs).
async fn take_over(
    conn: &mut Connection,
    id: &EntryId,
    fingerprint: &Fingerprint,
    claim: &ClaimTerms<'_>,
) -> PgResult<Reserve> {
    let row = conn
        .one(
            "UPDATE http_keys
             SET token = nextval('http_keys_token'), owner = $2,
                 lease_until = $3::bigint, fingerprint = $4
             WHERE entry_id = $1
             RETURNING token",
            &[
                &id.as_bytes().as_slice(),
                &claim.owner,
                &(claim.now_ms + claim.lease_ms),
                &fingerprint.as_bytes().as_slice(),
            ],
        )
        .await?;
    Ok(Reserve::Reserved(Token(
        row.get::<_, i64>(0).cast_unsigned(),
    )))
}

/// Books the claim's room on its key's usage row: a fresh row takes one place (or, when every
/// record held is live, is deleted again and the claim is `Full`); a settled claim only
/// returns what it freed.
async fn settle_room(
    conn: &mut Connection,
    id: &EntryId,
    outcome: Outcome,
    credit: Credit,
    claim: &ClaimTerms<'_>,
) -> PgResult<Reserve> {
    let shard = usage::shard_of(id);
    Ok(match outcome {
        Outcome::Settled(reserve) => {
            usage::apply(conn, shard, credit).await?;
            reserve
        }
        Outcome::Fresh(token)
            if usage::take(conn, shard, credit, claim.limits, claim.now_ms).await? =>
        {
            Reserve::Reserved(Token(token.cast_unsigned()))
        }
        Outcome::Fresh(_) => {
            // Every record held is live: refuse rather than forget one someone relies on. The
            // row inserted above took no room; it goes, the sweeps stay.
            conn.execute(
                "DELETE FROM http_keys WHERE entry_id = $1",
                &[&id.as_bytes().as_slice()],
            )
            .await?;
            Reserve::Full
        }
    })
}
