//! The PostgreSQL layout's version number, and the migration from the previous layout.
//!
//! Version 1 (the previous release) kept one ledger per schema, no scope, no creation time, and
//! the receipt as one text field `"<operation>/<total>"`, like SQLite's version 1. Version 2
//! (this release) is the layout in [`ledger`](super::ledger): the scope, the receipt as typed
//! columns, the schema version of each record and its creation time. Opening a version-1
//! schema migrates it in one transaction; its receipts replay unchanged.

use retrykey::{Key, Request};
use tokio_postgres::{Client, GenericClient, Transaction};

use super::BlockingPool;
use crate::versions::{LAYOUT_V1, Opening, read_v1_receipt, v1_records, version_table};
use crate::{Error, SCHEMA_VERSION};

/// Brings the schema to [`SCHEMA_VERSION`], creating the tables of `layout` (the current
/// layout) if there are none, and makes sure `scope` has its ledger row. Serialized by an
/// advisory lock, so that ledgers opening the same schema at once do not race in the catalog.
///
/// `now` (Unix seconds) becomes the creation time of migrated records, which had none: their
/// retention window starts at the migration.
pub async fn prepare(
    client: &mut Client,
    layout: &str,
    scope: &str,
    now: i64,
) -> Result<(), Error> {
    let tx = client.transaction().await?;
    tx.batch_execute("SELECT pg_advisory_xact_lock(7304)")
        .await?;
    // Dropping `tx` on an error rolls back: nothing was written.
    match Opening::of(version(&tx).await?)? {
        Opening::Create => {
            tx.batch_execute(layout).await?;
            tx.batch_execute(&version_table()).await?;
        }
        Opening::MigrateV1 => migrate_v1(&tx, layout, scope, now).await?,
        Opening::Current => {}
    }
    tx.execute(
        "INSERT INTO ledger (scope, total, records, operations) VALUES ($1, 0, 0, 0)
         ON CONFLICT DO NOTHING",
        &[&scope],
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// The layout version recorded in the schema on the connection's `search_path`, if any (for
/// tests and operators).
pub async fn version(db: &impl GenericClient) -> Result<Option<i64>, Error> {
    let has_meta: bool = db
        .query_one("SELECT to_regclass('retrykey_meta') IS NOT NULL", &[])
        .await?
        .get(0);
    if !has_meta {
        return Ok(None);
    }
    let row = db
        .query_opt("SELECT version FROM retrykey_meta", &[])
        .await?;
    Ok(row.map(|row| i64::from(row.get::<_, i32>(0))))
}

/// Rewrites a version-1 ledger into `layout` (version 2), under `scope`. Every old record is
/// read and checked before anything is changed.
async fn migrate_v1(
    tx: &Transaction<'_>,
    layout: &str,
    scope: &str,
    now: i64,
) -> Result<(), Error> {
    let mut old = Vec::new();
    for row in tx
        .query(
            "SELECT key, job, units, receipt FROM operations ORDER BY key",
            &[],
        )
        .await?
    {
        let (key, job, units, receipt): (String, String, i64, String) =
            (row.get(0), row.get(1), row.get(2), row.get(3));
        let (operation, total) = read_v1_receipt(&key, &receipt)?;
        old.push((key, job, units, operation, total));
    }
    let total: i64 = tx.query_one("SELECT total FROM ledger", &[]).await?.get(0);
    // The old tables go first: their names (and their indexes' names) are the new ones.
    tx.batch_execute("DROP TABLE operations; DROP TABLE ledger;")
        .await?;
    tx.batch_execute(layout).await?;
    let version = SCHEMA_VERSION as i32;
    for (key, job, units, operation, total) in &old {
        tx.execute(
            "INSERT INTO operations
               (scope, key, job, units, operation, committed_total, schema_version, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            &[&scope, key, job, units, operation, total, &version, &now],
        )
        .await?;
    }
    let last_operation = old.iter().map(|old| old.3).max().unwrap_or(0);
    tx.execute(
        "INSERT INTO ledger (scope, total, records, operations) VALUES ($1, $2, $3, $4)",
        &[&scope, &total, &(old.len() as i64), &last_operation],
    )
    .await?;
    tx.execute("UPDATE retrykey_meta SET version = $1", &[&version])
        .await?;
    Ok(())
}

/// Writes a fresh ledger in the version-1 layout into `schema` (created if missing) at `url`,
/// applying `operations` the way the previous release did. Tests use it to prove that a
/// migrated ledger replays old receipts.
#[doc(hidden)]
pub fn write_v1(url: &str, schema: &str, operations: &[(Key, Request)]) -> Result<(), Error> {
    let pool = BlockingPool::connect(url, schema, 1, "retrykey-v1")?;
    pool.run(async |client| Ok(write_v1_rows(client, operations).await))
        .map_err(|error| Error::Config(error.to_string()))?
}

async fn write_v1_rows(client: &mut Client, operations: &[(Key, Request)]) -> Result<(), Error> {
    let tx = client.transaction().await?;
    tx.batch_execute(LAYOUT_V1).await?;
    let (records, total) = v1_records(operations);
    for record in &records {
        tx.execute(
            "INSERT INTO operations (key, job, units, receipt) VALUES ($1, $2, $3, $4)",
            &[&record.key, &record.job, &record.units, &record.receipt],
        )
        .await?;
    }
    tx.execute("UPDATE ledger SET total = $1", &[&total])
        .await?;
    tx.commit().await?;
    Ok(())
}
