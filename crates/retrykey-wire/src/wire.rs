//! The wire protocol between the outbox's dispatcher and its consumer, as types both sides
//! share, so that neither can drift from the other.
//!
//! One delivery is `POST /conversions` with `Idempotency-Key: <event id>` (the same id as the
//! body's `event`, bare or quoted as the header's grammar has it) and a [`ConversionRequest`] as JSON. The first delivery of an event answers `201 Created` with a
//! [`Conversion`]; a redelivery answers `200 OK`, `Idempotent-Replayed: true` and the same
//! [`Conversion`]. A refusal is `application/problem+json` (4xx: do not retry; 503 with
//! `Retry-After`: retry).
//!
//! ```
//! use retrykey_wire::{Conversion, ConversionRequest};
//!
//! let request: ConversionRequest =
//!     serde_json::from_str(r#"{"event":"evt-1","job":"report.docx","units":3}"#)?;
//! assert_eq!(request.units, 3);
//! let answer = Conversion { event: "evt-1".into(), conversion: 1 };
//! assert_eq!(serde_json::to_string(&answer)?, r#"{"event":"evt-1","conversion":1}"#);
//! # Ok::<(), serde_json::Error>(())
//! ```

use serde::{Deserialize, Serialize};

/// Where deliveries go: `POST`.
pub const CONVERSIONS_PATH: &str = "/conversions";

/// How many conversions are stored: `GET`, answered with `{"conversions":<rows>}`.
pub const CONVERSIONS_COUNT_PATH: &str = "/conversions/count";

/// One event as delivered: convert `job`, `units` pages of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConversionRequest {
    /// The outbox event's id: the operation key of this conversion.
    pub event: String,
    /// The document to convert: a job name as [`retrykey::Request`] accepts it (not empty, at
    /// most [`retrykey::MAX_JOB_BYTES`] bytes, no control characters).
    pub job: String,
    /// How much work it is (above zero).
    pub units: u64,
}

/// The answer to a delivery, the same for the first one and every redelivery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conversion {
    /// The event this answers.
    pub event: String,
    /// The consumer's number for the conversion: 1, 2, 3 ... in the order they were stored.
    pub conversion: u64,
}

impl ConversionRequest {
    /// Whether the job can be converted: a job name and units as [`retrykey::Request`] accepts
    /// them, and units that a database column can hold. The reason otherwise, for people.
    ///
    /// ```
    /// use retrykey_wire::ConversionRequest;
    ///
    /// let request = |job: &str, units| ConversionRequest { event: "e".into(), job: job.into(), units };
    /// assert!(request("report.docx", 3).check().is_ok());
    /// assert_eq!(request("report.docx", 0).check().unwrap_err(), "units must be a positive whole number, not 0");
    /// assert!(request("", 3).check().is_err());
    /// ```
    pub fn check(&self) -> Result<(), String> {
        if self.units > MAX_UNITS {
            return Err(format!("units must be at most {MAX_UNITS}"));
        }
        retrykey::Request::new(self.job.as_str(), self.units)
            .map(drop)
            .map_err(|error| match error {
                retrykey::Error::InvalidRequest(problem) => problem.to_string(),
                other => other.to_string(),
            })
    }
}

/// The most units one conversion may ask for: what a signed 64-bit column holds.
pub const MAX_UNITS: u64 = i64::MAX as u64;
