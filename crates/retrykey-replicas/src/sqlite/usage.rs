//! Whether a claim finds room, and the one-row table that counts entries and bytes and hands out
//! tokens. Every function here runs inside a caller's `BEGIN IMMEDIATE` transaction.

use retrykey_http::{EntryId, StoreLimits};
use rusqlite::{OptionalExtension, Transaction, params};

use crate::ClaimTerms;

impl ClaimTerms<'_> {
    /// Whether a new entry must be refused: checked after sweeping everything expired, so a
    /// record is refused only when every record held is live.
    pub fn is_full(&self, tx: &Transaction<'_>) -> rusqlite::Result<bool> {
        if !Usage::read(tx)?.is_full(self.limits) {
            return Ok(false);
        }
        Usage::sweep(tx, self.now_ms, i64::MAX)?;
        Ok(Usage::read(tx)?.is_full(self.limits))
    }
}

/// The one-row table that counts entries and bytes and hands out tokens.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct Usage {
    entries: i64,
    bytes: i64,
}

impl Usage {
    fn read(tx: &Transaction<'_>) -> rusqlite::Result<Self> {
        tx.prepare_cached("SELECT entries, bytes FROM http_keys_usage WHERE id = 0")?
            .query_row([], |row| {
                Ok(Self {
                    entries: row.get(0)?,
                    bytes: row.get(1)?,
                })
            })
    }

    fn is_full(self, limits: StoreLimits) -> bool {
        limits.is_full(
            usize::try_from(self.entries).unwrap_or(usize::MAX),
            usize::try_from(self.bytes).unwrap_or(usize::MAX),
        )
    }

    /// A token higher than every token handed out before, by any process.
    pub fn next_token(tx: &Transaction<'_>) -> rusqlite::Result<i64> {
        tx.prepare_cached(
            "UPDATE http_keys_usage SET last_token = last_token + 1 WHERE id = 0
             RETURNING last_token",
        )?
        .query_row([], |row| row.get(0))
    }

    /// Counts one more entry.
    pub fn add_entry(tx: &Transaction<'_>) -> rusqlite::Result<()> {
        tx.prepare_cached("UPDATE http_keys_usage SET entries = entries + 1 WHERE id = 0")?
            .execute([])?;
        Ok(())
    }

    /// Deletes the entry `id`, whatever its state, and uncounts it.
    pub fn forget(tx: &Transaction<'_>, id: &EntryId) -> rusqlite::Result<()> {
        let size: Option<i64> = tx
            .prepare_cached("DELETE FROM http_keys WHERE entry_id = ?1 RETURNING size")?
            .query_row(params![id.as_bytes()], |row| row.get(0))
            .optional()?;
        if let Some(size) = size {
            Self::uncount(tx, 1, size)?;
        }
        Ok(())
    }

    /// Deletes up to `limit` finished entries past their retention; returns how many went.
    pub fn sweep(tx: &Transaction<'_>, now_ms: i64, limit: i64) -> rusqlite::Result<u64> {
        let (count, bytes): (i64, i64) = tx
            .prepare_cached(
                "SELECT count(*), coalesce(sum(size), 0) FROM (
                     SELECT size FROM http_keys
                     WHERE expires_at IS NOT NULL AND expires_at <= ?1 LIMIT ?2)",
            )?
            .query_row(params![now_ms, limit], |row| Ok((row.get(0)?, row.get(1)?)))?;
        if count > 0 {
            tx.prepare_cached(
                "DELETE FROM http_keys WHERE entry_id IN (
                     SELECT entry_id FROM http_keys
                     WHERE expires_at IS NOT NULL AND expires_at <= ?1 LIMIT ?2)",
            )?
            .execute(params![now_ms, limit])?;
            Self::uncount(tx, count, bytes)?;
        }
        Ok(count.cast_unsigned())
    }

    pub(crate) fn uncount(tx: &Transaction<'_>, entries: i64, bytes: i64) -> rusqlite::Result<()> {
        tx.prepare_cached(
            "UPDATE http_keys_usage SET entries = entries - ?1, bytes = bytes - ?2 WHERE id = 0",
        )?
        .execute(params![entries, bytes])?;
        Ok(())
    }

    pub(crate) fn add_bytes(tx: &Transaction<'_>, bytes: i64) -> rusqlite::Result<()> {
        tx.prepare_cached("UPDATE http_keys_usage SET bytes = bytes + ?1 WHERE id = 0")?
            .execute(params![bytes])?;
        Ok(())
    }
}
