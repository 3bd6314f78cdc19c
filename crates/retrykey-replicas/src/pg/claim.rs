//! Claiming a key in PostgreSQL: a fresh reservation, or the takeover of one whose lease has
//! lapsed.
//!
//! SQLite serializes whole transactions; PostgreSQL serializes per row. Two claims of one key
//! meet on its row: `INSERT ... ON CONFLICT DO NOTHING` lets exactly one insert it (the other
//! waits for that insert to commit or roll back, then sees it), and `SELECT ... FOR UPDATE`
//! makes the look at an existing row and the takeover that follows one step that no other
//! claim, completion or charge of the key can interleave with.

use retrykey_http::{EntryId, Fingerprint, Reserve, Token};

use crate::pg::pool::{Connection, PgResult};
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

/// Claims `id` for a first attempt of the request fingerprinted `fingerprint`, in one
/// transaction of its own (`BEGIN` travels with the first insert); on `Full` nothing of the
/// claim remains.
pub(crate) async fn claim(
    conn: &mut Connection,
    id: &EntryId,
    fingerprint: &Fingerprint,
    claim: &ClaimTerms<'_>,
    sweep: i64,
) -> PgResult<Reserve> {
    let now = claim.now_ms;
    let key = id.as_bytes().as_slice();
    let lease_until = now + claim.lease_ms;
    let mut credit = Credit::default();
    let mut outcome = Outcome::Settled(Reserve::Taken);
    for round in 0..ROUNDS {
        let prefix = if round == 0 { "BEGIN" } else { "" };
        let inserted = conn
            .opt_after(
                prefix,
                "INSERT INTO http_keys (entry_id, fingerprint, token, owner, lease_until)
                 VALUES ($1, $2, nextval('http_keys_token'), $3, $4::bigint)
                 ON CONFLICT (entry_id) DO NOTHING
                 RETURNING token",
                &[
                    &key,
                    &fingerprint.as_bytes().as_slice(),
                    &claim.owner,
                    &lease_until,
                ],
            )
            .await?;
        if let Some(row) = inserted {
            outcome = Outcome::Fresh(row.get(0));
            break;
        }
        let Some(row) = conn
            .opt(
                "SELECT lease_until, expires_at, size FROM http_keys WHERE entry_id = $1
                 FOR UPDATE",
                &[&key],
            )
            .await?
        else {
            continue; // gone since the insert conflicted: try the insert again
        };
        let (lease, expires_at, size): (Option<i64>, Option<i64>, i64) =
            (row.get(0), row.get(1), row.get(2));
        outcome = match (lease, expires_at) {
            // Finished and still kept: the caller replays it (it looked before the row was done).
            (_, Some(expires_at)) if expires_at > now => Outcome::Settled(Reserve::Taken),
            // Finished and past retention: as good as gone. Delete it and insert afresh.
            (_, Some(_)) => {
                conn.execute("DELETE FROM http_keys WHERE entry_id = $1", &[&key])
                    .await?;
                credit.forgot(size);
                continue;
            }
            // In flight, and its owner renewed the lease recently: it is working on it.
            (Some(lease), None) if lease > now => Outcome::Settled(Reserve::Taken),
            // In flight, but the owner stopped renewing: it died, or it is paused. Take the key
            // over with a new token; if the old owner is only paused, the token is what stops
            // its writes when it wakes (fence.rs).
            (_, None) => {
                let row = conn
                    .one(
                        "UPDATE http_keys
                         SET token = nextval('http_keys_token'), owner = $2,
                             lease_until = $3::bigint, fingerprint = $4
                         WHERE entry_id = $1
                         RETURNING token",
                        &[
                            &key,
                            &claim.owner,
                            &lease_until,
                            &fingerprint.as_bytes().as_slice(),
                        ],
                    )
                    .await?;
                Outcome::Settled(Reserve::Reserved(Token(
                    row.get::<_, i64>(0).cast_unsigned(),
                )))
            }
        };
        break;
    }
    // A few expired records go with every claim, so the store keeps up without any request
    // paying for a long backlog. After the key's own row: see the lock order in usage.rs.
    if sweep > 0 {
        let swept = usage::sweep(conn, now, sweep).await?;
        credit.room += swept.room;
        credit.bytes += swept.bytes;
    }
    let shard = usage::shard_of(id);
    let reserve = match outcome {
        Outcome::Settled(reserve) => {
            usage::apply(conn, shard, credit).await?;
            reserve
        }
        Outcome::Fresh(token) if usage::take(conn, shard, credit, claim.limits, now).await? => {
            Reserve::Reserved(Token(token.cast_unsigned()))
        }
        Outcome::Fresh(_) => {
            // Every record held is live: refuse rather than forget one someone relies on. The
            // row inserted above took no room; it goes, the sweeps stay.
            conn.execute("DELETE FROM http_keys WHERE entry_id = $1", &[&key])
                .await?;
            Reserve::Full
        }
    };
    conn.batch("COMMIT").await?;
    Ok(reserve)
}
