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
use rusqlite::{OptionalExtension, Transaction, params};

// ANCHOR: convert
/// Converts `request` once: answers from the `processed` record if there is one, and otherwise
/// writes the conversion and its record in `tx`.
pub fn convert(
    tx: &Transaction<'_>,
    request: &ConversionRequest,
    now_ms: i64,
) -> rusqlite::Result<Converted> {
    // A redelivery: answer what the first delivery answered, and write nothing.
    let recorded: Option<i64> = tx
        .prepare_cached("SELECT conversion FROM processed WHERE event_id = ?1")?
        .query_row(params![request.event], |row| row.get(0))
        .optional()?;
    if let Some(conversion) = recorded {
        return Ok(Converted {
            conversion: conversion.cast_unsigned(),
            replayed: true,
        });
    }
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
    // ... and its record, in the same transaction.
    tx.prepare_cached("INSERT INTO processed (event_id, conversion) VALUES (?1, ?2)")?
        .execute(params![request.event, conversion])?;
    Ok(Converted {
        conversion: conversion.cast_unsigned(),
        replayed: false,
    })
}
// ANCHOR_END: convert
