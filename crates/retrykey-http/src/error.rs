//! The crate's errors: what can be wrong with a key header, and how a response store can fail.

/// Everything that can go wrong in this crate outside of an HTTP answer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The `Idempotency-Key` header was present but unusable.
    #[error("invalid Idempotency-Key header: {0}")]
    Key(#[from] KeyHeaderProblem),
    /// The response store could not be reached or refused the operation.
    #[error("response store unavailable: {0}")]
    StoreUnavailable(String),
    /// A completion or release named a reservation the store no longer holds.
    #[error("the reservation is not held by this attempt")]
    NotOwner,
}

/// What exactly is wrong with an `Idempotency-Key` header (each answers 400).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum KeyHeaderProblem {
    /// The header is present with an empty value (or an empty quoted string).
    #[error("the key is empty")]
    Empty,
    /// The key is longer than 255 characters.
    #[error("the key is longer than 255 characters")]
    TooLong,
    /// Neither a quoted structured-field string nor a plain token.
    #[error("the key is neither a quoted string nor a plain token")]
    Malformed,
    /// The header appears on more than one line: which one is meant is ambiguous.
    #[error("the header appears more than once")]
    Repeated,
}
