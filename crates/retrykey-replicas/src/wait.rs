//! What a lookup saw, and how a duplicate waits for an attempt running in another process.
//!
//! Waiting is bounded polling of the entry's row, not LISTEN/NOTIFY: it works the same on
//! SQLite (which has no notifications) and PostgreSQL, it survives a reconnect without a
//! subscription to restore, and it costs one indexed read per interval per waiting duplicate,
//! which are rare. The layer's wait deadline bounds how long any duplicate polls.

use std::future::Future;
use std::time::Duration;

use retrykey_http::{AttemptEnd, Error, Fingerprint, Lookup, Waiter};

use crate::record::ResponseColumns;

/// The first pause between two looks at a running entry; it doubles up to [`POLL_MAX`].
const POLL_FIRST: Duration = Duration::from_millis(2);
/// The longest pause between two looks: the most a waiter lags behind a completion.
const POLL_MAX: Duration = Duration::from_millis(50);

/// One entry's row, as a lookup classifies it at one moment.
#[derive(Debug)]
pub(crate) enum Seen {
    /// No row, or a finished row past retention.
    Absent,
    /// An in-flight row whose lease has lapsed: its owner died or is paused, and a claim will
    /// take it over.
    Lapsed,
    /// In flight under a live lease.
    InFlight(Fingerprint),
    /// Finished and kept.
    Done(Fingerprint, retrykey_http::StoredResponse),
}

/// An entry's row: fingerprint, lease end, retention end, and the answer once finished.
pub(crate) type EntryRow = (Vec<u8>, Option<i64>, Option<i64>, Option<ResponseColumns>);

impl Seen {
    pub(crate) fn from_row(row: Option<EntryRow>, now_ms: i64) -> Result<Self, Error> {
        let Some((fingerprint, lease_until, expires_at, response)) = row else {
            return Ok(Self::Absent);
        };
        let fingerprint = <[u8; 32]>::try_from(fingerprint.as_slice())
            .map(Fingerprint::from_bytes)
            .map_err(|_| corrupt("fingerprint"))?;
        Ok(match (expires_at, response) {
            (Some(expires_at), _) if expires_at <= now_ms => Self::Absent,
            (Some(_), Some(columns)) => Self::Done(
                fingerprint,
                columns.into_response().ok_or_else(|| corrupt("response"))?,
            ),
            (Some(_), None) => return Err(corrupt("finished row without a response")),
            (None, _) if lease_until.is_none_or(|until| until <= now_ms) => Self::Lapsed,
            (None, _) => Self::InFlight(fingerprint),
        })
    }

    /// The layer's view; an in-flight entry comes with a waiter that polls with `look`.
    pub(crate) fn into_lookup<F, Fut>(self, look: F) -> Lookup
    where
        F: Fn() -> Fut + Send + 'static,
        Fut: Future<Output = Result<Seen, Error>> + Send,
    {
        match self {
            Self::Absent | Self::Lapsed => Lookup::Absent,
            Self::Done(fingerprint, response) => Lookup::Done {
                fingerprint,
                response,
            },
            Self::InFlight(fingerprint) => Lookup::InFlight {
                fingerprint,
                wait: waiter(look),
            },
        }
    }
}

/// Polls until the running attempt ends: its answer, `Released` when its row went away, or
/// `Lapsed` when its lease lapsed (the duplicate then takes the key over itself).
pub(crate) fn waiter<F, Fut>(look: F) -> Waiter
where
    F: Fn() -> Fut + Send + 'static,
    Fut: Future<Output = Result<Seen, Error>> + Send,
{
    Waiter::new(async move {
        let mut pause = POLL_FIRST;
        loop {
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(POLL_MAX);
            match look().await {
                Ok(Seen::InFlight(_)) => {}
                Ok(Seen::Done(_, response)) => return AttemptEnd::Completed(response),
                Ok(Seen::Absent) => return AttemptEnd::Released,
                Ok(Seen::Lapsed) => return AttemptEnd::Lapsed,
                // The store is unreachable for a moment: keep waiting; the layer's deadline
                // ends the wait if it does not come back.
                Err(error) => tracing::warn!(%error, "waiting duplicate could not look"),
            }
        }
    })
}

fn corrupt(what: &str) -> Error {
    Error::StoreUnavailable(format!("unreadable record: {what}"))
}
