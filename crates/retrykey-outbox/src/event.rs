//! An outgoing event: its id, what it asks the consumer to do, and where it stands.

use std::fmt;
use std::time::Duration;

use serde::Serialize;

/// A duration in milliseconds, as the tables store times.
pub fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// The longest reason an operator may give when marking an event failed, in characters.
pub const MAX_REASON_CHARS: usize = 200;

/// An event's id: the operation key of its delivery, so the consumer's dedup key.
///
/// A new id is a random UUID: unique across every outbox, so a consumer that serves several
/// (or an outbox rebuilt from scratch) never mistakes a new event for one it has processed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct EventId(String);

impl EventId {
    /// A new, random id.
    pub fn random() -> Self {
        Self(uuid::Uuid::new_v4().to_string())
    }

    /// An id as stored (or as an operator typed it).
    pub fn from_stored(id: impl Into<String>) -> Self {
        Self(id.into())
    }

    /// The id's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first eight characters: enough to tell events apart in a table for people.
    pub fn short(&self) -> &str {
        self.0.get(..8).unwrap_or(&self.0)
    }
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What one event asks the consumer to do: convert `job`, `units` pages of it. It is written in
/// the accepted job's own transaction and never changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Event {
    /// The event's id.
    pub id: EventId,
    /// The accepted job's operation number in the document service's ledger.
    pub operation: u64,
    /// The job name (the document).
    pub job: String,
    /// The job's units.
    pub units: u64,
}

/// Where an event stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EventState {
    /// Not delivered yet: due for delivery, waiting for its next try, or claimed by a
    /// dispatcher that is delivering it now.
    Pending,
    /// The consumer acknowledged it. Final.
    Delivered,
    /// The consumer refused it with a definitive answer (a 4xx): delivering it again cannot
    /// help. Waits for an operator, who may re-drive it or mark it failed.
    Rejected,
    /// An operator marked it failed, with a reason. Final.
    Failed,
}

impl EventState {
    /// The name stored in the table and printed.
    pub fn name(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Delivered => "delivered",
            Self::Rejected => "rejected",
            Self::Failed => "failed",
        }
    }

    /// The state a stored name stands for.
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Pending, Self::Delivered, Self::Rejected, Self::Failed]
            .into_iter()
            .find(|state| state.name() == name)
    }
}

impl fmt::Display for EventState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An event as the outbox holds it: the event and its delivery history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EventRow {
    /// The event.
    #[serde(flatten)]
    pub event: Event,
    /// The ledger scope its job was accepted in.
    pub scope: String,
    /// When its job was accepted, in ms since the Unix epoch.
    pub accepted_at_ms: i64,
    /// Where it stands.
    pub state: EventState,
    /// Pending: the earliest time a dispatcher may claim it.
    pub due_at_ms: i64,
    /// How many times a dispatcher has claimed it.
    pub deliveries: u32,
    /// The dispatcher that claimed it last.
    pub owner: Option<String>,
    /// The fencing token of that claim.
    pub token: Option<u64>,
    /// While claimed: the end of the claim's lease.
    pub lease_until_ms: Option<i64>,
    /// Why the last delivery did not end in an acknowledgement.
    pub last_error: Option<String>,
    /// When it was delivered, rejected or marked failed.
    pub settled_at_ms: Option<i64>,
    /// The consumer's conversion number, from its acknowledgement.
    pub conversion: Option<u64>,
    /// Failed: the operator's reason.
    pub reason: Option<String>,
}

impl EventRow {
    /// Whether a dispatcher holds a claim on it whose lease has not lapsed at `now_ms`.
    pub fn claimed_at(&self, now_ms: i64) -> bool {
        self.state == EventState::Pending && self.lease_until_ms.is_some_and(|end| end > now_ms)
    }
}

/// An event a dispatcher has claimed: it may deliver it, and its writes about it are fenced by
/// `token`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimed {
    /// The event.
    pub event: Event,
    /// The claim's fencing token: higher than any earlier claim's, of any event.
    pub token: u64,
    /// Which delivery this is (1 for the first claim).
    pub delivery: u32,
}
