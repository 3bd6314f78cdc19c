//! The entry bound without a hot row: the free room is split over a few shard rows.
//!
//! SQLite counts entries in one row, which costs nothing there: its writers queue for the
//! file's one lock anyway. On PostgreSQL that row would be the one lock every fresh claim of
//! every replica waits for, so claims of unrelated keys would run one at a time. Reading a
//! count without locking it would not do either: two claims that each see "one place left"
//! would both take it, and the bound would be off by the number of concurrent claims.
//!
//! So `http_keys_usage` holds [`SHARDS`] rows, each with a share of the free `room`
//! (`max_entries` minus the entries held, summed over the rows). A fresh claim takes one unit
//! from the first row with room that no other transaction holds (`FOR UPDATE SKIP LOCKED`,
//! starting at the row its key hashes to): claims of different keys do not wait for each
//! other, and since the rows together hold exactly the free room, a claim that finds a unit
//! is within the bound. Only when no free row has room (the store is near its bound) does a
//! claim lock every row, in shard order, sum them, sweep expired records if that is still not
//! enough, and share what is left out again. Near the bound claims therefore queue, as they
//! must for the bound to be exact; far from it they do not.
//!
//! Bytes are counted the same way (a sum over the rows, each row's share meaningless alone);
//! as in SQLite they are only checked when a key is reserved, so reading their committed sum
//! without a lock is enough.
//!
//! Lock order, which keeps this free of deadlocks: a transaction locks its key's row before
//! any usage row, and then either one usage row or all of them in shard order. A sweep may lock
//! expired records after its claim's usage row, but it skips any that another transaction
//! holds, so it never waits for one.

use retrykey_http::{EntryId, StoreLimits};

use crate::pg::pool::{Connection, PgResult};

/// How many rows share the room. Sixteen keeps two of eight busy connections on the same row
/// rarely, and the all-rows path cheap.
pub(crate) const SHARDS: i32 = 16;

/// Expired records swept per claim, on average (all of them before refusing one).
pub(crate) const SWEEP_BATCH: i64 = 2;

/// The usage row that `id`'s claims, releases and completions write to.
pub(crate) fn shard_of(id: &EntryId) -> i32 {
    let bytes = id.as_bytes();
    let head = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    i32::try_from(head % SHARDS.cast_unsigned()).unwrap_or(0)
}

/// What a transaction freed or added before it settles with the usage rows: written once, at
/// the end, so that every usage row is locked after the key rows (see the lock order above).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Credit {
    /// Entries freed.
    pub(crate) room: i64,
    /// Change in bytes held.
    pub(crate) bytes: i64,
}

impl Credit {
    /// One entry of `size` bytes deleted.
    pub(crate) fn forgot(&mut self, size: i64) {
        self.room += 1;
        self.bytes -= size;
    }

    /// Adds what `other` freed.
    pub(crate) fn add(&mut self, other: Credit) {
        self.room += other.room;
        self.bytes += other.bytes;
    }
}

/// Deletes up to `limit` finished entries past their retention; returns what that freed.
/// Rows another transaction has locked are skipped: that one is replacing or deleting them,
/// and waiting for it here could deadlock with its own wait for a usage row.
pub(crate) async fn sweep(conn: &mut Connection, now_ms: i64, limit: i64) -> PgResult<Credit> {
    let row = conn
        .one(
            "WITH gone AS (
                 DELETE FROM http_keys WHERE entry_id IN (
                     SELECT entry_id FROM http_keys
                     WHERE expires_at <= $1::bigint
                     ORDER BY expires_at LIMIT $2::bigint
                     FOR UPDATE SKIP LOCKED)
                 RETURNING size)
             SELECT count(*), coalesce(sum(size), 0)::bigint FROM gone",
            &[&now_ms, &limit],
        )
        .await?;
    Ok(Credit {
        room: row.get(0),
        bytes: -row.get::<_, i64>(1),
    })
}

/// Records a sweep deletes per statement: [`PgEntries::sweep`](crate::PgEntries::sweep) runs
/// one such chunk at a time, each its own short transaction, so that no claim waits long for a
/// usage row it credits or steps over many rows it holds, however long the backlog.
pub(crate) const SWEEP_CHUNK: i64 = 1000;

/// What one chunk of a sweep freed, and where the next one starts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Chunk {
    /// Entries deleted.
    pub(crate) gone: i64,
    /// The latest retention end among them: every record this chunk passed over ends no
    /// later, so the next chunk's index scan starts here rather than at the oldest records,
    /// whose deleted index entries the table keeps until it is vacuumed.
    pub(crate) last: Option<i64>,
}

/// Deletes up to `limit` finished entries past their retention whose retention ended at
/// `from` or later, oldest first, and credits what that freed to `shard`'s row: one statement,
/// sent alone, so one transaction of its own (key rows first, the usage row last: the lock
/// order above). Rows another transaction holds are skipped, never waited for; the next sweep
/// finds them if they are still there.
pub(crate) async fn sweep_chunk(
    conn: &mut Connection,
    shard: i32,
    from: i64,
    now_ms: i64,
    limit: i64,
) -> PgResult<Chunk> {
    let row = conn
        .one(
            "WITH gone AS (
                 DELETE FROM http_keys WHERE entry_id IN (
                     SELECT entry_id FROM http_keys
                     WHERE expires_at >= $1::bigint AND expires_at <= $2::bigint
                     ORDER BY expires_at LIMIT $3::bigint
                     FOR UPDATE SKIP LOCKED)
                 RETURNING size, expires_at),
             freed AS (
                 SELECT count(*) AS entries, coalesce(sum(size), 0)::bigint AS held,
                        max(expires_at) AS last
                 FROM gone),
             credited AS (
                 UPDATE http_keys_usage
                 SET room = room + freed.entries, bytes = bytes - freed.held
                 FROM freed
                 WHERE shard = $4 AND freed.entries > 0)
             SELECT entries, last FROM freed",
            &[&from, &now_ms, &limit, &shard],
        )
        .await?;
    Ok(Chunk {
        gone: row.get(0),
        last: row.get(1),
    })
}

/// Deletes up to `limit` finished entries past their retention, credits what that freed to
/// `shard`'s row, which the transaction holds already, and commits: one round trip. The
/// entries go first, in the statement, so their rows are locked before the usage row is
/// written.
pub(crate) async fn sweep_into_and_commit(
    conn: &mut Connection,
    shard: i32,
    now_ms: i64,
    limit: i64,
) -> PgResult<()> {
    conn.execute_and_commit(
        "WITH gone AS (
             DELETE FROM http_keys WHERE entry_id IN (
                 SELECT entry_id FROM http_keys
                 WHERE expires_at <= $1::bigint
                 ORDER BY expires_at LIMIT $2::bigint
                 FOR UPDATE SKIP LOCKED)
             RETURNING size),
         freed AS (SELECT count(*) AS entries, coalesce(sum(size), 0)::bigint AS held FROM gone)
         UPDATE http_keys_usage
         SET room = room + freed.entries, bytes = bytes - freed.held
         FROM freed
         WHERE shard = $3 AND freed.entries > 0",
        &[&now_ms, &limit, &shard],
    )
    .await?;
    Ok(())
}

/// Writes `credit` into `shard`'s row.
pub(crate) async fn apply(conn: &mut Connection, shard: i32, credit: Credit) -> PgResult<()> {
    if credit != Credit::default() {
        conn.execute(
            "UPDATE http_keys_usage SET room = room + $2::bigint, bytes = bytes + $3::bigint
             WHERE shard = $1",
            &[&shard, &credit.room, &credit.bytes],
        )
        .await?;
    }
    Ok(())
}

/// Takes room for one new entry and writes `credit`; false (with `credit` written) when the
/// store is full even after sweeping every expired record.
pub(crate) async fn take(
    conn: &mut Connection,
    shard: i32,
    credit: Credit,
    limits: StoreLimits,
    now_ms: i64,
) -> PgResult<bool> {
    let max_bytes = i64::try_from(limits.max_bytes).unwrap_or(i64::MAX);
    if take_from_one_row(conn, shard, credit, max_bytes).await? {
        return Ok(true);
    }
    take_from_the_totals(conn, credit, max_bytes, now_ms).await
}

/// The common case: one row with room, one update. The row the key hashes to is tried first,
/// then the next ones; a row another claim holds is skipped, not waited for, so claims never
/// queue here. A negative row (the bound was lowered below the entries held, see `schema.rs`)
/// sends every claim the long way until it is repaid. False, with nothing changed, when no
/// row would do.
async fn take_from_one_row(
    conn: &mut Connection,
    shard: i32,
    credit: Credit,
    max_bytes: i64,
) -> PgResult<bool> {
    // Inside a savepoint: a row that another transaction updated after this statement began
    // stays locked even when it turns out to have no room, and a claim that went on to the
    // long way below holding it could deadlock with another claim on that way. Rolling back
    // to the savepoint lets go of it.
    let took = conn
        .execute_after(
            "SAVEPOINT fast_path",
            "UPDATE http_keys_usage
             SET room = room + $2::bigint - 1, bytes = bytes + $3::bigint
             WHERE shard = (
                 SELECT shard FROM http_keys_usage
                 WHERE room + $2::bigint - 1 >= 0
                   AND (SELECT min(room) >= 0
                               AND coalesce(sum(bytes), 0) + $3::bigint < $4::bigint
                        FROM http_keys_usage)
                 ORDER BY (shard - $1 + $5) % $5
                 LIMIT 1
                 FOR UPDATE SKIP LOCKED)",
            &[&shard, &credit.room, &credit.bytes, &max_bytes, &SHARDS],
        )
        .await?;
    if took != 1 {
        conn.batch("ROLLBACK TO SAVEPOINT fast_path").await?;
    }
    Ok(took == 1)
}

/// Near the bound: every row, locked in shard order, and the exact totals, swept of every
/// expired record when they leave no room; then the rows rewritten with what is left.
async fn take_from_the_totals(
    conn: &mut Connection,
    credit: Credit,
    max_bytes: i64,
    now_ms: i64,
) -> PgResult<bool> {
    let rows = conn
        .all(
            "SELECT room, bytes FROM http_keys_usage ORDER BY shard FOR UPDATE",
            &[],
        )
        .await?;
    let mut total = credit;
    for row in &rows {
        total.add(Credit {
            room: row.get(0),
            bytes: row.get(1),
        });
    }
    let full = |total: Credit| total.room <= 0 || total.bytes >= max_bytes;
    if full(total) {
        let swept = sweep(conn, now_ms, i64::MAX).await?;
        total.add(swept);
    }
    let admitted = !full(total);
    if admitted {
        total.room -= 1;
    }
    share_out(conn, total).await?;
    Ok(admitted)
}

/// Rewrites every usage row so that together they hold `total`: the room evenly (a deficit
/// all in the first row), the bytes in the first row. Call with every row locked.
pub(crate) async fn share_out(conn: &mut Connection, total: Credit) -> PgResult<()> {
    let shards = i64::from(SHARDS);
    let rooms: Vec<i64> = (0..shards)
        .map(|shard| {
            if total.room < 0 {
                if shard == 0 { total.room } else { 0 }
            } else {
                total.room / shards + i64::from(shard < total.room % shards)
            }
        })
        .collect();
    let bytes: Vec<i64> = (0..shards)
        .map(|shard| if shard == 0 { total.bytes } else { 0 })
        .collect();
    conn.execute(
        "UPDATE http_keys_usage AS u SET room = v.room, bytes = v.bytes
         FROM unnest($1::bigint[], $2::bigint[]) WITH ORDINALITY AS v(room, bytes, n)
         WHERE u.shard = v.n - 1",
        &[&rooms, &bytes],
    )
    .await?;
    Ok(())
}
