//! One run of one check: the operations it makes and every exchange it sends, in order.
//!
//! Every request goes through here, so the record is whole: the witness of a failure and the
//! history the shared rules judge are both read from it, never from what a check remembers.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::profile::{KeyFormat, Profile};
use crate::wire::{self, Base, WireAnswer, WireRequest};

/// The header the draft names.
pub const IDEMPOTENCY_KEY: &str = "Idempotency-Key";

/// Added to a request's number when it goes to the other path: the shared rules see one
/// number per request, and a body number never comes near it.
pub const ELSEWHERE: u64 = 1_000_000;

/// One logical operation: a key, who sends it, and which request it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    /// Its number in the run, from 1: the judge's operation id.
    pub id: u32,
    /// The key, as chosen (sent as the draft's string, `"..."`, unless the profile's keys are
    /// opaque).
    pub key: String,
    /// Which of the profile's callers sends it (0: none).
    pub caller: usize,
    /// The number written into the body template.
    pub n: u64,
    /// The path it is sent to.
    pub path: String,
    /// Which life of its key it belongs to (0 until the key first expires): a key used again
    /// after its expiry is a new key to the shared rules.
    pub life: u32,
}

impl Operation {
    /// The key as the shared rules know it: one per caller, so that two callers' uses of one
    /// key are judged as the different operations they are.
    pub fn judged_key(&self) -> String {
        let key = match self.caller {
            0 => self.key.clone(),
            caller => format!("c{caller}:{}", self.key),
        };
        match self.life {
            0 => key,
            life => format!("{key}~{life}"),
        }
    }

    /// What the request asks for, as the one number the shared rules compare: the body's
    /// number, plus [`ELSEWHERE`] when it is sent to the profile's other path.
    pub fn identity(&self, profile: &Profile) -> u64 {
        let elsewhere = if self.path == profile.request.path {
            0
        } else {
            ELSEWHERE
        };
        self.n + elsewhere
    }
}

/// How an exchange ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// A whole answer.
    Answered(WireAnswer),
    /// The kit closed the connection on purpose, without reading.
    Left,
    /// No answer: the connection failed or timed out.
    Failed(String),
}

/// One request and what came of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchange {
    /// Its number in the run, from 1.
    pub number: usize,
    /// When it was sent, in milliseconds since the run began.
    pub at_ms: u64,
    /// How long it took.
    pub took_ms: u64,
    /// The operation and attempt it belongs to, for a request with a valid key.
    pub attempt: Option<(Operation, u32)>,
    /// What was sent.
    pub request: WireRequest,
    /// What came back.
    pub outcome: Ending,
}

impl Exchange {
    /// The answer, if one came.
    pub fn answer(&self) -> Option<&WireAnswer> {
        match &self.outcome {
            Ending::Answered(answer) => Some(answer),
            _ => None,
        }
    }
}

/// A check's failure: what broke, and the exchanges that show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Breach {
    /// What broke, in one or two sentences.
    pub what: String,
    /// The numbers of the exchanges that show it.
    pub exchanges: Vec<usize>,
}

impl Breach {
    /// A finding shown by these exchanges.
    pub fn new(what: impl Into<String>, exchanges: &[usize]) -> Self {
        Self {
            what: what.into(),
            exchanges: exchanges.to_vec(),
        }
    }

    /// The same finding, shown after exchange `earlier`: the one that makes it a breach (the
    /// first answer that a later one contradicts).
    pub fn after(mut self, earlier: usize) -> Self {
        self.exchanges.insert(0, earlier);
        self
    }

    /// The same finding, shown after every exchange of `earlier` it does not name yet: the
    /// requests a later answer may have been taken from.
    pub fn with_earlier(mut self, earlier: &[usize]) -> Self {
        let mut shown: Vec<usize> = earlier
            .iter()
            .copied()
            .filter(|number| !self.exchanges.contains(number))
            .collect();
        shown.append(&mut self.exchanges);
        self.exchanges = shown;
        self
    }
}

/// One check's run against one server.
#[derive(Debug)]
pub struct Session<'a> {
    profile: &'a Profile,
    base: &'a Base,
    run: String,
    start: Instant,
    next_op: AtomicU32,
    next_exchange: AtomicUsize,
    exchanges: Mutex<Vec<Exchange>>,
}

impl<'a> Session<'a> {
    /// A session whose keys start with `run` (unique to this run of the kit).
    pub fn new(profile: &'a Profile, base: &'a Base, run: String) -> Self {
        Self {
            profile,
            base,
            run,
            start: Instant::now(),
            next_op: AtomicU32::new(1),
            next_exchange: AtomicUsize::new(1),
            exchanges: Mutex::default(),
        }
    }

    /// Milliseconds since the run began, on the clock exchanges are stamped with.
    pub fn elapsed_ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    /// The profile.
    pub fn profile(&self) -> &Profile {
        self.profile
    }

    /// Every exchange so far, in the order they were sent.
    pub fn exchanges(&self) -> Vec<Exchange> {
        let mut exchanges = self.lock().clone();
        exchanges.sort_by_key(|exchange| exchange.number);
        exchanges
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Exchange>> {
        self.exchanges
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The key this run calls `name`, in the profile's key format.
    pub fn key_named(&self, name: &str) -> String {
        let name = format!("{name}-{}", self.run);
        match self.profile.key.format {
            KeyFormat::Any => name,
            KeyFormat::Uuid => uuid_from(&name),
        }
    }

    /// A new operation: a fresh key and a fresh body, on the profile's path, with no caller.
    pub fn operation(&self) -> Operation {
        let id = self.next_op.fetch_add(1, Ordering::Relaxed);
        Operation {
            id,
            key: self.key_named(&format!("k{id}")),
            caller: 0,
            n: u64::from(id),
            path: self.profile.request.path.clone(),
            life: 0,
        }
    }

    /// Another operation under `op`'s key: the same request with a new body number.
    pub fn changed_body(&self, op: &Operation) -> Operation {
        let fresh = self.operation();
        Operation {
            n: fresh.n,
            id: fresh.id,
            ..op.clone()
        }
    }

    /// Another operation under `op`'s key: the same body, sent to `path`.
    pub fn changed_path(&self, op: &Operation, path: &str) -> Operation {
        Operation {
            id: self.operation().id,
            path: path.to_owned(),
            ..op.clone()
        }
    }

    /// The request for `op`, with `extra` headers after the profile's.
    pub fn request(&self, op: &Operation, extra: &[(String, String)]) -> WireRequest {
        let mut request = self.keyless(op.n, &op.path, op.caller);
        request
            .headers
            .push((IDEMPOTENCY_KEY.to_owned(), self.key_value(&op.key)));
        request.headers.extend(extra.iter().cloned());
        request
    }

    /// `key` as the header's value: bare for an opaque key, else the draft's string.
    pub fn key_value(&self, key: &str) -> String {
        if self.profile.key.opaque {
            key.to_owned()
        } else {
            format!("\"{key}\"")
        }
    }

    /// The request for body number `n` on `path` by `caller`, without a key.
    pub fn keyless(&self, n: u64, path: &str, caller: usize) -> WireRequest {
        let shape = &self.profile.request;
        let caller = self.profile.callers.as_ref().zip(caller.checked_sub(1));
        // A caller's header stands in for a fixed header of the same name (the API's token).
        let replaced = |name: &str| {
            caller.is_some_and(|(c, _)| {
                c.header
                    .as_deref()
                    .is_some_and(|h| h.eq_ignore_ascii_case(name))
            })
        };
        let mut headers: Vec<(String, String)> = shape
            .headers
            .iter()
            .filter(|(name, _)| !replaced(name))
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        if let Some(content_type) = &shape.content_type {
            headers.push(("Content-Type".to_owned(), content_type.clone()));
        }
        let mut from = None;
        if let Some((callers, index)) = caller {
            match (&callers.header, callers.values.get(index)) {
                (Some(header), Some(value)) => headers.push((header.clone(), value.clone())),
                _ => from = callers.addresses.get(index).copied(),
            }
        }
        WireRequest {
            method: shape.method.clone(),
            path: path.to_owned(),
            headers,
            body: self.profile.body(n),
            from,
        }
    }

    /// Sends `op` (attempt number `attempt`) and records the exchange.
    pub async fn send(&self, op: &Operation, attempt: u32, extra: &[(String, String)]) -> Sent {
        let request = self.request(op, extra);
        self.exchange(request, Some((op.clone(), attempt))).await
    }

    /// Sends any request and records it, as part of `attempt` when it carries a valid key.
    pub async fn exchange(&self, request: WireRequest, attempt: Option<(Operation, u32)>) -> Sent {
        let limit = Duration::from_millis(self.profile.scale.timeout_ms);
        let sending = self.sending();
        let outcome = match wire::exchange(self.base, &request, limit).await {
            Ok(answer) => Ending::Answered(answer),
            Err(error) => Ending::Failed(error.to_string()),
        };
        self.record(sending, request, attempt, outcome)
    }

    /// The number and the moment of an exchange about to be sent: numbers follow sending, not
    /// answers, so a witness reads in the order the server was asked.
    fn sending(&self) -> (usize, Duration) {
        let number = self.next_exchange.fetch_add(1, Ordering::Relaxed);
        (number, self.start.elapsed())
    }

    /// Sends `op` whole, then closes the connection after `linger` without reading.
    pub async fn send_and_leave(
        &self,
        op: &Operation,
        extra: &[(String, String)],
        linger: Duration,
    ) -> Sent {
        let request = self.request(op, extra);
        let sending = self.sending();
        let outcome = match wire::send_and_leave(self.base, &request, linger).await {
            Ok(()) => Ending::Left,
            Err(error) => Ending::Failed(error.to_string()),
        };
        self.record(sending, request, Some((op.clone(), 1)), outcome)
    }

    fn record(
        &self,
        (number, at): (usize, Duration),
        request: WireRequest,
        attempt: Option<(Operation, u32)>,
        outcome: Ending,
    ) -> Sent {
        let took = self.start.elapsed() - at;
        let at_ms = at.as_millis() as u64;
        self.lock().push(Exchange {
            number,
            at_ms,
            took_ms: took.as_millis() as u64,
            attempt,
            request,
            outcome: outcome.clone(),
        });
        Sent {
            number,
            at_ms,
            outcome,
        }
    }

    /// The server's effect count, read from the profile's effects path (`None` without one).
    pub async fn effects(&self) -> Result<Option<(u64, usize)>, Breach> {
        let Some(effects) = &self.profile.effects else {
            return Ok(None);
        };
        let request = WireRequest {
            method: "GET".to_owned(),
            path: effects.path.clone(),
            headers: Vec::new(),
            body: String::new(),
            from: None,
        };
        let sent = self.exchange(request, None).await;
        let count = sent
            .answer()
            .filter(|a| a.status == 200)
            .and_then(|answer| {
                let value: serde_json::Value = serde_json::from_str(&answer.body).ok()?;
                value.get(&effects.field)?.as_u64()
            });
        let why = match &sent.outcome {
            Ending::Answered(answer) => format!(
                "answered {}, not 200 with a JSON number in {:?}",
                answer.status, effects.field
            ),
            Ending::Left => "was left unread".to_owned(),
            Ending::Failed(why) => format!("got no answer: {why}"),
        };
        match count {
            Some(count) => Ok(Some((count, sent.number))),
            None => Err(Breach::new(
                format!("the effects path {why}"),
                &[sent.number],
            )),
        }
    }

    /// Whether `answer` carries the profile's replay marker.
    pub fn is_replay(&self, answer: &WireAnswer) -> bool {
        marked_replay(self.profile, answer)
    }
}

/// A UUID in version 4's form whose bits come from `name`: the same name, the same UUID.
fn uuid_from(name: &str) -> String {
    // FNV-1a, twice with different starts: 128 bits that follow every byte of the name.
    let hash = |start: u64| {
        name.bytes().fold(start, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    };
    let (high, low) = (hash(0xcbf2_9ce4_8422_2325), hash(0x6c62_272e_07bb_0142));
    let high = (high & !0xf000) | 0x4000; // version 4
    let low = (low & !(0b11 << 62)) | (0b10 << 62); // the RFC 4122 variant
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        high >> 32,
        (high >> 16) & 0xffff,
        high & 0xffff,
        low >> 48,
        low & 0xffff_ffff_ffff
    )
}

/// Whether `answer` carries `profile`'s replay marker (never, for a profile without one).
pub fn marked_replay(profile: &Profile, answer: &WireAnswer) -> bool {
    let replay = &profile.replay;
    let Some(value) = replay
        .header
        .as_deref()
        .and_then(|name| answer.header(name))
    else {
        return false;
    };
    replay
        .value
        .as_deref()
        .is_none_or(|expected| value.trim().eq_ignore_ascii_case(expected))
}

/// What [`Session::send`] returns: the exchange's number and how it ended.
#[derive(Debug, Clone)]
pub struct Sent {
    /// The exchange's number in the run.
    pub number: usize,
    /// When it was sent, in milliseconds since the run began.
    pub at_ms: u64,
    /// How it ended.
    pub outcome: Ending,
}

impl Sent {
    /// The answer, if one came.
    pub fn answer(&self) -> Option<&WireAnswer> {
        match &self.outcome {
            Ending::Answered(answer) => Some(answer),
            _ => None,
        }
    }

    /// The status, if an answer came.
    pub fn status(&self) -> Option<u16> {
        self.answer().map(|answer| answer.status)
    }
}
