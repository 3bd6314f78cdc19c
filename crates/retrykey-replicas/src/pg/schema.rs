//! The tables, created in one schema, and the usage rows matched to the configured bound.

use retrykey_http::{Error, StoreLimits};

use crate::pg::pool::{Connection, PgResult, pool_failure, unavailable};
use crate::pg::usage::{self, Credit, SHARDS};

/// The advisory lock held while a store creates its schema: two stores creating the same
/// schema at once would otherwise race in the catalog (`CREATE ... IF NOT EXISTS` is not safe
/// against a concurrent create of the same name).
const SCHEMA_LOCK: i64 = 7305;

/// The SQLSTATE of `http_keys_no_room()`: a class of its own, so no other failure reads as it.
pub(crate) const NO_ROOM: &str = "RK001";

fn tables(schema: &str) -> String {
    format!(
        "
CREATE SCHEMA IF NOT EXISTS {schema};
CREATE TABLE IF NOT EXISTS {schema}.http_keys (
    entry_id    bytea PRIMARY KEY,
    fingerprint bytea NOT NULL,
    token       bigint NOT NULL,
    owner       text NOT NULL,
    lease_until bigint,            -- in flight: the lease's end, in ms since the epoch
    expires_at  bigint,            -- finished: the end of retention; NULL while in flight
    status      integer,
    headers     bytea,
    body        bytea,
    whole       boolean,
    size        bigint NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS http_keys_expiry ON {schema}.http_keys (expires_at)
    WHERE expires_at IS NOT NULL;
-- Fencing tokens only grow, across every key and every replica.
CREATE SEQUENCE IF NOT EXISTS {schema}.http_keys_token;
-- The free room and the bytes held, split over a few rows (see usage.rs).
CREATE TABLE IF NOT EXISTS {schema}.http_keys_usage (
    shard integer PRIMARY KEY,
    room  bigint NOT NULL,
    bytes bigint NOT NULL
);
INSERT INTO {schema}.http_keys_usage (shard, room, bytes)
    SELECT g, 0, 0 FROM generate_series(0, {last}) AS g ON CONFLICT DO NOTHING;
-- The bound the room was computed for.
CREATE TABLE IF NOT EXISTS {schema}.http_keys_bound (
    id          integer PRIMARY KEY CHECK (id = 0),
    max_entries bigint NOT NULL
);
-- Raised by a fresh claim's statement that inserted its key but found no usage row with room
-- alone (claim.rs): the error rolls the claim back whole, even with its COMMIT sent along.
CREATE OR REPLACE FUNCTION {schema}.http_keys_no_room() RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'no usage row has room alone' USING ERRCODE = '{no_room}';
END
$$;
",
        last = SHARDS - 1,
        no_room = NO_ROOM,
    )
}

/// Accepts lower-case SQL identifiers only, so that a schema name can be written into DDL.
pub(crate) fn check_identifier(name: &str) -> Result<(), Error> {
    retrykey_pg::check_identifier(name).map_err(pool_failure)
}

/// Creates the tables in `schema` if missing (after dropping the schema when `fresh`), and
/// makes the usage rows hold the room `limits` leave. One transaction under the schema lock.
pub(crate) async fn prepare(
    conn: &mut Connection,
    schema: &str,
    limits: StoreLimits,
    fresh: bool,
) -> Result<(), Error> {
    check_identifier(schema)?;
    prepare_in(conn, schema, limits, fresh)
        .await
        .map_err(|error| unavailable(&error))
}

async fn prepare_in(
    conn: &mut Connection,
    schema: &str,
    limits: StoreLimits,
    fresh: bool,
) -> PgResult<()> {
    conn.batch(&format!(
        "BEGIN; SELECT pg_advisory_xact_lock({SCHEMA_LOCK})"
    ))
    .await?;
    if fresh {
        conn.batch(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
            .await?;
    }
    conn.batch(&tables(schema)).await?;
    let max_entries = i64::try_from(limits.max_entries).unwrap_or(i64::MAX);
    let bound: Option<i64> = conn
        .opt("SELECT max_entries FROM http_keys_bound WHERE id = 0", &[])
        .await?
        .map(|row| row.get(0));
    if bound != Some(max_entries) {
        // First use, or a new bound: recount under every usage row's lock, so that no claim
        // takes room from the old split meanwhile. Entries above a lowered bound stay as a
        // deficit that releases and sweeps repay before any new key gets in.
        conn.all(
            "SELECT room FROM http_keys_usage ORDER BY shard FOR UPDATE",
            &[],
        )
        .await?;
        let held = conn
            .one(
                "SELECT count(*), coalesce(sum(size), 0)::bigint FROM http_keys",
                &[],
            )
            .await?;
        let total = Credit {
            room: max_entries.saturating_sub(held.get(0)),
            bytes: held.get(1),
        };
        usage::share_out(conn, total).await?;
        conn.execute(
            "INSERT INTO http_keys_bound (id, max_entries) VALUES (0, $1::bigint)
             ON CONFLICT (id) DO UPDATE SET max_entries = excluded.max_entries",
            &[&max_entries],
        )
        .await?;
    }
    conn.batch("COMMIT").await
}
