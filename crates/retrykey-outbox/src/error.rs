//! What can go wrong in the document service's database, and what an operator's action refuses.

use crate::EventId;

/// Why a job could not be accepted, or the outbox could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The ledger refused the job (a bad key or request, a conflict, a full ledger) or could not
    /// commit it; its own error says which. A storage failure there leaves the outcome unknown:
    /// accept again with the same key to find out.
    #[error(transparent)]
    Ledger(#[from] retrykey::Error),
    /// SQLite refused an outbox operation; its transaction, if any, was rolled back.
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL refused an outbox operation, or could not be reached.
    #[error("postgres: {0}")]
    Postgres(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The database could not be opened: a bad URL or schema name, a file that cannot be
    /// created, a server that does not answer.
    #[error("cannot open the database: {0}")]
    Open(#[from] retrykey_durable::Error),
    /// An accepted job has no outgoing event: the outbox lost it. The correct accept never gets
    /// here: the two commit together, and the sweep deletes an event only once its job's record
    /// is gone.
    #[error("job {operation} was accepted but has no outgoing event")]
    EventMissing {
        /// The job's operation number.
        operation: u64,
    },
    /// A dispatcher setting that cannot work, named.
    #[error("{0}")]
    Config(String),
    /// A database call's thread ended without an answer: it panicked, or the runtime is
    /// shutting down. Whether the call's write happened is unknown; the claim lapses, and the
    /// event is claimed again.
    #[error("{0} ended without an answer")]
    Interrupted(String),
    /// [`wait`](crate::store::wait) was called on a thread that runs async code, where blocking
    /// would stall the runtime: nothing was called.
    #[error("a blocking store call from async code: await the store's call instead")]
    WaitInAsync,
    /// The runtime that blocking calls wait on could not start: nothing was called.
    #[error("the outbox store's runtime did not start: {0}")]
    Runtime(String),
}

impl Error {
    /// A PostgreSQL failure reported through the ledger's pool, as this crate reports it.
    pub(crate) fn postgres(error: retrykey::Error) -> Self {
        match error {
            retrykey::Error::Storage(cause) => Self::Postgres(cause),
            other => Self::Postgres(Box::new(other)),
        }
    }
}

/// Why an operator's action on an event changed nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActionError {
    /// No event has this id.
    #[error("no event {0}")]
    UnknownEvent(String),
    /// The consumer acknowledged it: there is nothing uncertain left to act on.
    #[error("event {event} was delivered: the consumer acknowledged it")]
    Delivered {
        /// The event.
        event: EventId,
    },
    /// An operator marked it failed; that decision stands.
    #[error("event {event} was marked failed: {reason}")]
    MarkedFailed {
        /// The event.
        event: EventId,
        /// The reason given then.
        reason: String,
    },
    /// A dispatcher holds a live claim on it and may be delivering it right now.
    #[error(
        "event {event} is being delivered by {owner} (its claim runs {left_ms} ms more); try again after that"
    )]
    Claimed {
        /// The event.
        event: EventId,
        /// The dispatcher holding the claim.
        owner: String,
        /// How long the claim still runs.
        left_ms: i64,
    },
    /// The consumer has converted it: marking it failed would contradict what happened.
    #[error(
        "event {event} was converted by the consumer (conversion {conversion}): re-drive it so that its acknowledgement is recorded"
    )]
    Converted {
        /// The event.
        event: EventId,
        /// The consumer's conversion number.
        conversion: u64,
    },
    /// The reason is empty, too long, or holds a control character.
    #[error("a reason must be 1 to {max} characters of text, without control characters", max = crate::event::MAX_REASON_CHARS)]
    BadReason,
}
