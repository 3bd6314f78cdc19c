//! What one run recorded: every attempt a client made and what it saw, every handler run and
//! effect on the server, and every fault the network and the hosts went through.
//!
//! The clients and the server write here as they go; the checker and a trace only read. Time is
//! the run's clock, in milliseconds since the run began: in the simulator the simulation's, so
//! two runs of one seed record the same history byte for byte.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// A key as findings and traces print it: a long key (a simulated client's UUID) by its first
/// eight characters, enough to tell a run's keys apart; a key of at most sixteen whole, as a
/// reader compares it with what went on the wire.
pub fn short_key(key: &str) -> &str {
    if key.len() <= 16 {
        key
    } else {
        key.get(..8).unwrap_or(key)
    }
}

/// One operation: the client that runs it and its number on that client (both from 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OpId {
    /// The client host, `client-<n>`.
    pub client: u32,
    /// The operation's number on its client.
    pub op: u32,
}

impl fmt::Display for OpId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "client-{} op {}", self.client, self.op)
    }
}

/// What one attempt got back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// An HTTP answer.
    Answer {
        /// Its status.
        status: u16,
        /// Its body, as text.
        body: String,
        /// `Idempotent-Replayed: true` was set.
        replayed: bool,
    },
    /// No answer: the connection was refused, cut, or the client stopped waiting.
    None(NoReply),
}

/// Why an attempt got no answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoReply {
    /// The connection could not be opened (the server was down): nothing was sent.
    Refused,
    /// The connection broke before the answer arrived.
    Cut,
    /// The client gave up waiting and closed the connection.
    GaveUp,
}

/// How an operation ended, as its client reported it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    /// `Outcome::Succeeded`, with the body the client kept.
    Succeeded {
        /// The answer's body.
        body: String,
        /// It came from the service's record.
        replayed: bool,
    },
    /// `Outcome::Rejected`, with the status.
    Rejected(u16),
    /// `Outcome::Unknown`.
    Unknown,
}

/// How a handler run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HandlerEnd {
    /// It answered: status and body.
    Answered(u16, String),
    /// It failed with a server error before its effect (the simulated outage).
    Failed(u16),
    /// Its future was dropped before it finished.
    Abandoned,
}

/// One thing that happened, at one moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HistoryEvent {
    /// A client sent an attempt of an operation.
    Sent {
        /// The operation.
        id: OpId,
        /// The attempt's number, from 1.
        attempt: u32,
        /// The key it carried.
        key: String,
        /// The amount it asked to pay: what tells two requests under one key apart (a recorder
        /// of another server writes a number that names the request it sent).
        amount: u64,
    },
    /// What that attempt got back.
    Got {
        /// The operation.
        id: OpId,
        /// The attempt's number.
        attempt: u32,
        /// The answer, or why there was none.
        reply: Reply,
    },
    /// The operation ended.
    Ended {
        /// The operation.
        id: OpId,
        /// Attempts made.
        attempts: u32,
        /// How.
        how: Ended,
    },
    /// The handler began to serve a request (the layer let it through).
    HandlerStarted {
        /// The request's key.
        key: String,
        /// The amount.
        amount: u64,
        /// The server's life it ran in (1, then 2 after a restart, ...).
        life: u32,
    },
    /// That handler run ended.
    HandlerEnded {
        /// The request's key.
        key: String,
        /// The server's life it started in.
        life: u32,
        /// How it ended.
        end: HandlerEnd,
    },
    /// A payment was made: the effect that must happen once per operation.
    Effect {
        /// The key of the request that made it.
        key: String,
        /// The amount paid.
        amount: u64,
        /// The payment's number.
        payment: u64,
    },
    /// While serving the request under `key`, the service called another service under
    /// `foreign`: the effects the other service makes under `foreign` are that request's.
    Called {
        /// The key of the request being served.
        key: String,
        /// The key the call carried.
        foreign: String,
    },
    /// The server answered, but the connection was cut before the answer left.
    ReplyCut {
        /// The host the answer was for.
        to: String,
        /// The key of the request whose answer was lost.
        key: String,
        /// The status that was lost.
        status: u16,
    },
    /// A network or host fault began or ended.
    Fault(String),
    /// The server host crashed (`life` ended).
    Crashed {
        /// The life that ended.
        life: u32,
    },
    /// The server host started again.
    Restarted {
        /// The new life.
        life: u32,
    },
}

/// An event with its moment and the host that recorded it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Milliseconds of simulated time since the run began.
    pub at_ms: u64,
    /// `client-<n>`, `server`, `bank`, `provider` or `network`.
    pub host: String,
    /// What happened.
    pub event: HistoryEvent,
}

/// The shared, append-only record of one run.
#[derive(Clone, Debug, Default)]
pub struct History {
    entries: Arc<Mutex<Vec<Entry>>>,
    now_ms: Arc<AtomicU64>,
}

impl History {
    /// Records `event` by `host`, at the current simulated time.
    pub fn record(&self, host: &str, event: HistoryEvent) {
        let at_ms = self.now_ms.load(Ordering::Relaxed);
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Entry {
                at_ms,
                host: host.to_owned(),
                event,
            });
    }

    /// Sets the clock every entry is stamped with, in milliseconds since the run began (the
    /// simulator's driver calls it at every step of its clock).
    pub fn set_now(&self, ms: u64) {
        self.now_ms.store(ms, Ordering::Relaxed);
    }

    /// Every entry so far, in the order they were recorded.
    pub fn entries(&self) -> Vec<Entry> {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}
