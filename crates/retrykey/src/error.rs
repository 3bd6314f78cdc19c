//! The one error type of the ledger: every rejection says what was wrong and changes nothing.
//! The longest key and job name accepted live here, beside the problems that name them.

use std::fmt;

/// The longest key accepted, in bytes.
pub const MAX_KEY_BYTES: usize = 255;

/// The longest job name accepted, in bytes.
pub const MAX_JOB_BYTES: usize = 64;

/// Why a ledger refused an operation. Whatever the variant, nothing was applied or recorded.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The operation key is not acceptable.
    #[error("invalid operation key: {0}")]
    InvalidKey(KeyProblem),
    /// The request is not acceptable.
    #[error("invalid request: {0}")]
    InvalidRequest(RequestProblem),
    /// The key was first used with a different request; its record is left as it was.
    #[error("conflict: this operation key was first used with a different request")]
    Conflict,
    /// The ledger holds as many records as it may; only replays are still answered.
    #[error(
        "capacity: the ledger is full (max_records {max_records}); new operations are rejected"
    )]
    Capacity {
        /// The record limit that was reached.
        max_records: usize,
    },
    /// The operation would take the committed total past the ceiling.
    #[error(
        "ceiling: {units} more units on a total of {total} would pass the ceiling of {max_units}"
    )]
    Ceiling {
        /// Units the rejected operation asked for.
        units: u64,
        /// The committed total, unchanged.
        total: u64,
        /// The ceiling.
        max_units: u64,
    },
    /// The backend failed. Whether the operation committed is unknown to this caller: retry it
    /// with the same key to find out.
    #[error("storage failure (outcome unknown; retry with the same key): {0}")]
    Storage(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Compares the kind of failure and its details; two storage failures are equal when their
/// messages are.
impl PartialEq for Error {
    fn eq(&self, other: &Self) -> bool {
        use Error::*;
        match (self, other) {
            (InvalidKey(a), InvalidKey(b)) => a == b,
            (InvalidRequest(a), InvalidRequest(b)) => a == b,
            (Conflict, Conflict) => true,
            (Capacity { max_records: a }, Capacity { max_records: b }) => a == b,
            (
                Ceiling {
                    units: a,
                    total: b,
                    max_units: c,
                },
                Ceiling {
                    units: x,
                    total: y,
                    max_units: z,
                },
            ) => (a, b, c) == (x, y, z),
            (Storage(a), Storage(b)) => a.to_string() == b.to_string(),
            _ => false,
        }
    }
}

/// What is wrong with an operation key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyProblem {
    /// The key is empty.
    Empty,
    /// The key is longer than [`MAX_KEY_BYTES`].
    TooLong {
        /// Its length in bytes.
        bytes: usize,
    },
    /// The key contains a control character (newline, tab, NUL, ...).
    ControlCharacter {
        /// The position of the first one, in characters.
        at: usize,
    },
}

impl fmt::Display for KeyProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => write!(f, "it is empty"),
            Self::TooLong { bytes } => {
                write!(
                    f,
                    "it is {bytes} bytes long; at most {MAX_KEY_BYTES} are allowed"
                )
            }
            Self::ControlCharacter { at } => {
                write!(f, "it contains a control character at position {at}")
            }
        }
    }
}

/// What is wrong with a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestProblem {
    /// The job name is empty.
    EmptyJob,
    /// The job name is longer than [`MAX_JOB_BYTES`].
    JobTooLong {
        /// Its length in bytes.
        bytes: usize,
    },
    /// The job name contains a control character.
    JobControlCharacter,
    /// The unit count is zero.
    ZeroUnits,
    /// The unit count is negative.
    NegativeUnits,
    /// The unit count is not a whole number.
    NotANumber,
    /// The unit count does not fit in 64 bits.
    UnitsOverflow,
}

impl fmt::Display for RequestProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EmptyJob => write!(f, "the job name is empty"),
            Self::JobTooLong { bytes } => write!(
                f,
                "the job name is {bytes} bytes long; at most {MAX_JOB_BYTES} are allowed"
            ),
            Self::JobControlCharacter => write!(f, "the job name contains a control character"),
            Self::ZeroUnits => write!(f, "units must be a positive whole number, not 0"),
            Self::NegativeUnits => write!(f, "units must be a positive whole number, not negative"),
            Self::NotANumber => write!(f, "units must be a positive whole number"),
            Self::UnitsOverflow => write!(f, "units do not fit in a 64-bit count"),
        }
    }
}
