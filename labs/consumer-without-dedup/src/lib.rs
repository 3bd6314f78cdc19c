// Mirrored by labs/consumer-without-dedup: see labs/README.md before changing this file.
//! The dedup transaction on SQLite: the conversion and the record that its event was processed
//! are written together, or not at all.
//!
//! The caller opens the transaction with `BEGIN IMMEDIATE` (the write lock is taken before the
//! lookup, so two deliveries of one event cannot both find no record) and commits it. Whatever
//! fails before the commit leaves neither row: the dispatcher delivers again, and the lookup
//! decides afresh.

use crate::Converted;
use retrykey_wire::ConversionRequest;
// NEGATIVE: no `OptionalExtension`: the lookup that needed it is gone (below).
use rusqlite::{Transaction, params};

// ANCHOR: convert
/// Converts `request` once: answers from the `processed` record if there is one, and otherwise
/// writes the conversion and its record in `tx`.
pub fn convert(
    tx: &Transaction<'_>,
    request: &ConversionRequest,
    now_ms: i64,
) -> rusqlite::Result<Converted> {
    // NEGATIVE: no look at the `processed` records, and (below) no record written: every
    // delivery converts. The dispatcher delivers at least once, so a delivery whose answer was
    // lost (a timeout, a crash after the commit) arrives again and converts the document a
    // second time, however carefully the outbox and the dispatcher did their part.
    // The effect...
    let conversion: i64 = tx
        .prepare_cached(
            "INSERT INTO conversions (event_id, job, units, converted_at) VALUES (?1, ?2, ?3, ?4)
             RETURNING number",
        )?
        .query_row(
            params![
                request.event,
                request.job,
                request.units.cast_signed(),
                now_ms
            ],
            |row| row.get(0),
        )?;
    Ok(Converted {
        conversion: conversion.cast_unsigned(),
        replayed: false,
    })
}
// ANCHOR_END: convert
