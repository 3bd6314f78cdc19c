//! What crosses the wire between the outbox's dispatcher (`retrykey-outbox`) and its consumer
//! (`retrykey-converter`): the paths, the delivery and the answer, as types both sides import,
//! so that the producer and the consumer cannot drift apart and neither has to build the
//! other.
//!
//! A delivery carries the outbox event's id twice, as its `Idempotency-Key` and as the body's
//! `event`: the consumer deduplicates by it, so a redelivery gets the first delivery's
//! [`Conversion`] again instead of a second conversion.
//!
//! # Reading order
//!
//! 1. `wire.rs`: the two paths, [`ConversionRequest`] and its [`check`](ConversionRequest::check),
//!    and [`Conversion`], with the statuses each side expects.
//!
//! # Example
//!
//! ```
//! use retrykey_wire::{CONVERSIONS_PATH, Conversion, ConversionRequest};
//!
//! // The dispatcher's side: one event, as it is posted to CONVERSIONS_PATH.
//! let delivery = ConversionRequest { event: "evt-1".into(), job: "report.docx".into(), units: 3 };
//! assert!(delivery.check().is_ok());
//! let body = serde_json::to_string(&delivery)?;
//! assert_eq!(CONVERSIONS_PATH, "/conversions");
//!
//! // The consumer's side: the same bytes, read back, and its answer.
//! let received: ConversionRequest = serde_json::from_str(&body)?;
//! assert_eq!(received, delivery);
//! let answer: Conversion = serde_json::from_str(r#"{"event":"evt-1","conversion":1}"#)?;
//! assert_eq!(answer.event, received.event);
//! # Ok::<(), serde_json::Error>(())
//! ```

mod wire;

pub use wire::{
    CONVERSIONS_COUNT_PATH, CONVERSIONS_PATH, Conversion, ConversionRequest, MAX_UNITS,
};
