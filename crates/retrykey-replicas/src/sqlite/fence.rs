// Mirrored by labs/lease-without-fence: see labs/README.md before changing this file.
//! The fenced writes: each one goes through only while its token is still the key's current one.
//!
//! A replica that was paused past its lease wakes up believing it still owns the key. Its
//! lease cannot tell it otherwise (it has not looked at a clock since), but the row can: a
//! takeover gave the key a higher token, so every write below, made with the old one, changes
//! nothing.

use retrykey_http::{EntryId, Token};
use rusqlite::{Transaction, params};

use crate::record::ResponseColumns;

// ANCHOR: fence
/// Whether the attempt holding `token` still holds `id`: the row is in flight under this very
/// token. A charge made in `tx` commits only if this is true.
pub fn holds(tx: &Transaction<'_>, id: &EntryId, token: Token) -> rusqlite::Result<bool> {
    let held: i64 = tx
        .prepare_cached(
            "SELECT count(*) FROM http_keys
             WHERE entry_id = ?1 AND token = ?2 AND expires_at IS NULL",
        )?
        .query_row(params![id.as_bytes(), token.0.cast_signed()], |row| {
            row.get(0)
        })?;
    Ok(held == 1)
}
// ANCHOR_END: fence

/// Stores the answer of an attempt, making the entry finished until `expires_at`. Unfenced on
/// its own: call it in a transaction where [`holds`] said yes.
pub fn finish(
    tx: &Transaction<'_>,
    id: &EntryId,
    response: &ResponseColumns,
    expires_at: i64,
) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "UPDATE http_keys
         SET status = ?2, headers = ?3, body = ?4, whole = ?5, size = ?6,
             expires_at = ?7, lease_until = NULL
         WHERE entry_id = ?1",
    )?
    .execute(params![
        id.as_bytes(),
        response.status,
        response.headers,
        response.body,
        response.whole,
        response.size,
        expires_at
    ])?;
    Ok(())
}

/// Extends the lease of the attempt holding `token` to `lease_until`. False when the token is
/// no longer current: the attempt has ended, or another replica has taken the key over.
pub fn renew(
    tx: &Transaction<'_>,
    id: &EntryId,
    token: Token,
    lease_until: i64,
) -> rusqlite::Result<bool> {
    if !holds(tx, id, token)? {
        return Ok(false);
    }
    tx.prepare_cached("UPDATE http_keys SET lease_until = ?2 WHERE entry_id = ?1")?
        .execute(params![id.as_bytes(), lease_until])?;
    Ok(true)
}
