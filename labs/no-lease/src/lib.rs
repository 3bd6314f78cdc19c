// Mirrored by labs/no-lease: see labs/README.md before changing this file.
//! Claiming a key in SQLite: a fresh reservation, or the takeover of one whose lease has lapsed.
//!
//! Runs inside one `BEGIN IMMEDIATE` transaction, so no other connection, in this process or
//! another, writes between the look at the row and the insert or update.

use retrykey_http::{EntryId, Fingerprint, Reserve, Token};
use rusqlite::{OptionalExtension, Transaction, params};

use crate::ClaimTerms;
use crate::sqlite::Usage;

/// Claims `id` for a first attempt of the request fingerprinted `fingerprint`.
pub fn claim(
    tx: &Transaction<'_>,
    id: &EntryId,
    fingerprint: &Fingerprint,
    claim: &ClaimTerms<'_>,
) -> rusqlite::Result<Reserve> {
    let now = claim.now_ms;
    let row: Option<(Option<i64>, Option<i64>)> = tx
        .prepare_cached("SELECT lease_until, expires_at FROM http_keys WHERE entry_id = ?1")?
        .query_row(params![id.as_bytes()], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()?;
    match row {
        // Finished and still kept: the caller replays it (it looked before the row was done).
        Some((_, Some(expires_at))) if expires_at > now => return Ok(Reserve::Taken),
        // Finished and past retention: as good as gone.
        Some((_, Some(_))) => Usage::forget(tx, id)?,
        // NEGATIVE: an in-flight record belongs to its owner for good, lease or no lease: no
        // takeover. When the owner dies mid-request nobody finishes or releases the key, so
        // every retry with it is refused (409) for as long as the record is kept.
        Some((_, None)) => return Ok(Reserve::Taken),
        None => {}
    }
    if claim.is_full(tx)? {
        return Ok(Reserve::Full);
    }
    let token = Usage::next_token(tx)?;
    tx.prepare_cached(
        "INSERT INTO http_keys (entry_id, fingerprint, token, owner, lease_until)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        id.as_bytes(),
        fingerprint.as_bytes(),
        token,
        claim.owner,
        now + claim.lease_ms
    ])?;
    Usage::add_entry(tx)?;
    Ok(Reserve::Reserved(Token(token.cast_unsigned())))
}
