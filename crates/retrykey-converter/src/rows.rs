//! The rows the consumer's database answers with, the same from either backend.

use std::time::{SystemTime, UNIX_EPOCH};

/// What one delivery came to: the conversion's number, and whether an earlier delivery had
/// already made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Converted {
    /// The conversion's number (`conversions.number`).
    pub conversion: u64,
    /// True when the event was already processed: nothing was written this time.
    pub replayed: bool,
}

/// One stored conversion: the effect, as an operator reconciling it reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversionRow {
    /// Its number, in the order conversions were stored.
    pub number: u64,
    /// The event that asked for it.
    pub event: String,
    /// The document converted.
    pub job: String,
    /// The units converted.
    pub units: u64,
    /// When it was stored, in milliseconds since the Unix epoch.
    pub converted_at_ms: i64,
}

/// One `processed` record: this event has been converted, as this conversion, at this time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessedRow {
    /// The event id.
    pub event: String,
    /// The number of its conversion.
    pub conversion: u64,
    /// When the conversion was stored, in milliseconds since the Unix epoch.
    pub converted_at_ms: i64,
}

/// Now, in milliseconds since the Unix epoch (0 for a clock set before it).
pub(crate) fn unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
        })
}
