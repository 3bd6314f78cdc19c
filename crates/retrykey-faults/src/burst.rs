//! A burst of keyed requests by concurrent clients, each retrying its key with the same key until
//! the answer is definitive, then replaying it: what a fault run drives while the fault happens.
//!
//! A request has a deadline of its own and a key a bounded number of attempts, so a run always
//! ends; what did not end in time is counted, never waited for.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// One attempt's answer, as the client classifies it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Heard {
    /// The answer that settles the key (201 with its payment, or the ledger's receipt).
    Definitive {
        /// Its identity, which every replay must repeat byte for byte.
        identity: String,
        /// Whether the service said it replayed a stored answer (`Idempotent-Replayed`, the
        /// ledger's `replayed`): on a key's first success, an earlier attempt had committed
        /// without its answer reaching the client.
        replayed: bool,
    },
    /// An answer that says "try again" as the contract allows (503 or 409 with `Retry-After`,
    /// the ledger's `err` line).
    Retry(String),
    /// An answer outside the contract (a 500, a 503 without `Retry-After`, a torn 201, a
    /// refused or reset connection: the server is meant to stay up, garbage).
    Wrong(String),
    /// No answer within the request's deadline.
    TimedOut,
}

/// What a burst sends its requests to.
pub trait Service: Sync {
    /// Sends attempt `attempt` (from 0) of `key` for client `client`, answered within `deadline`.
    fn send(&self, client: usize, key: &str, attempt: u32, deadline: Duration) -> Heard;
}

/// The shape of a burst.
#[derive(Clone, Debug)]
pub struct BurstPlan {
    /// Keys in all, shared out among the clients.
    pub keys: usize,
    /// Clients sending at once.
    pub clients: usize,
    /// The keys' common prefix (a run's keys never meet another run's).
    pub prefix: String,
    /// How long one request may take.
    pub deadline: Duration,
    /// Attempts per key (and per replay) at most.
    pub max_attempts: u32,
    /// The pause of a client between two keys, which stretches the burst over the fault.
    pub pace: Duration,
}

impl BurstPlan {
    /// The name of key number `index`.
    pub fn key(&self, index: usize) -> String {
        format!("{}-{index}", self.prefix)
    }
}

/// Why a request was sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// To settle a key.
    First,
    /// To replay a settled key.
    Replay,
}

/// One request as the client saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SentRequest {
    /// The key's number.
    pub key: usize,
    /// Why it was sent.
    pub purpose: Purpose,
    /// When it was sent.
    pub start: Instant,
    /// How long its answer took.
    pub took: Duration,
    /// The answer.
    pub answer: Heard,
}

/// Everything a burst's clients saw.
#[derive(Debug, Default)]
pub struct Log {
    /// Every request, in no particular order.
    pub sent: Vec<SentRequest>,
    /// Each settled key's first definitive answer.
    pub firsts: BTreeMap<usize, String>,
    /// The keys whose first definitive answer was a replay: an attempt before it had committed,
    /// and its answer was lost on the way.
    pub settled_by_replay: BTreeSet<usize>,
    /// Each definitive replay: the key and the answer.
    pub replays: Vec<(usize, String)>,
}

impl Log {
    fn merge(&mut self, other: Log) {
        self.sent.extend(other.sent);
        self.firsts.extend(other.firsts);
        self.settled_by_replay.extend(other.settled_by_replay);
        self.replays.extend(other.replays);
    }
}

/// The pause before attempt `attempt` + 1: growing, capped, so that a client neither hammers a
/// server that is away nor sleeps past its return.
pub fn backoff(attempt: u32) -> Duration {
    Duration::from_millis((50 * u64::from(attempt + 1)).min(500))
}

/// Runs `plan` against `service` until every key is settled and replayed, or `stop` passes.
pub fn run(service: &dyn Service, plan: &BurstPlan, stop: Instant) -> Log {
    let mut log = Log::default();
    std::thread::scope(|scope| {
        let clients: Vec<_> = (0..plan.clients)
            .map(|client| scope.spawn(move || run_client(service, plan, client, stop)))
            .collect();
        for client in clients {
            log.merge(client.join().expect("a client thread panicked"));
        }
    });
    log
}

/// One client: its keys in turn, each settled, replayed, and the one before it replayed again.
/// While a key waits for its next attempt, the client replays the key it settled before, so
/// replays of stored keys run all through the burst, the fault included.
fn run_client(service: &dyn Service, plan: &BurstPlan, client: usize, stop: Instant) -> Log {
    let mut log = Log::default();
    let mut previous = None;
    for index in (client..plan.keys).step_by(plan.clients.max(1)) {
        if Instant::now() >= stop {
            break;
        }
        let key = (index, Purpose::First);
        if let Some((first, replayed)) =
            settle(service, plan, (client, previous), key, stop, &mut log)
        {
            log.firsts.insert(index, first);
            if replayed {
                log.settled_by_replay.insert(index);
            }
            for replayed in [Some(index), previous].into_iter().flatten() {
                let key = (replayed, Purpose::Replay);
                if let Some((again, _)) = settle(service, plan, (client, None), key, stop, &mut log)
                {
                    log.replays.push((replayed, again));
                }
            }
            previous = Some(index);
        }
        std::thread::sleep(plan.pace);
    }
    log
}

/// Sends `key` until its answer is definitive (its identity, and whether it was a replay), the
/// attempts run out, or `stop` passes; after each answer that is not, replays `meanwhile` (a
/// key settled before) once.
fn settle(
    service: &dyn Service,
    plan: &BurstPlan,
    (client, meanwhile): (usize, Option<usize>),
    key: (usize, Purpose),
    stop: Instant,
    log: &mut Log,
) -> Option<(String, bool)> {
    for attempt in 0..plan.max_attempts {
        if Instant::now() >= stop {
            return None;
        }
        if let Heard::Definitive { identity, replayed } =
            send(service, plan, client, key, attempt, log)
        {
            return Some((identity, replayed));
        }
        if let Some(stored) = meanwhile {
            let replay = (stored, Purpose::Replay);
            if let Heard::Definitive { identity, .. } =
                send(service, plan, client, replay, attempt, log)
            {
                log.replays.push((stored, identity));
            }
        }
        std::thread::sleep(backoff(attempt));
    }
    None
}

/// Sends one attempt of key `index` and logs it.
fn send(
    service: &dyn Service,
    plan: &BurstPlan,
    client: usize,
    (index, purpose): (usize, Purpose),
    attempt: u32,
    log: &mut Log,
) -> Heard {
    let start = Instant::now();
    let answer = service.send(client, &plan.key(index), attempt, plan.deadline);
    log.sent.push(SentRequest {
        key: index,
        purpose,
        start,
        took: start.elapsed(),
        answer: answer.clone(),
    });
    answer
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// A service that answers each key's first `fails` attempts with a retry, then its
    /// identity, and counts the effects it made (one per key, at its first success).
    struct Flaky {
        fails: u32,
        effects: Mutex<BTreeMap<String, u32>>,
    }

    impl Service for Flaky {
        fn send(&self, _client: usize, key: &str, _attempt: u32, _deadline: Duration) -> Heard {
            let mut effects = self.effects.lock().unwrap();
            let seen = effects.entry(key.to_owned()).or_default();
            *seen += 1;
            if *seen <= self.fails {
                Heard::Retry("503".into())
            } else {
                Heard::Definitive {
                    identity: format!("answer of {key}"),
                    // The key's own first success is fresh; every later one replays it.
                    replayed: *seen > self.fails + 1,
                }
            }
        }
    }

    fn plan(keys: usize) -> BurstPlan {
        BurstPlan {
            keys,
            clients: 3,
            prefix: "t".into(),
            deadline: Duration::from_secs(1),
            max_attempts: 4,
            pace: Duration::ZERO,
        }
    }

    #[test]
    fn every_key_is_settled_once_and_replayed_with_its_first_answer() {
        let service = Flaky {
            fails: 2,
            effects: Mutex::default(),
        };
        let log = run(
            &service,
            &plan(10),
            Instant::now() + Duration::from_secs(30),
        );
        assert_eq!(log.firsts.len(), 10);
        assert_eq!(log.firsts[&7], "answer of t-7");
        assert!(log.settled_by_replay.is_empty());
        // Each key replayed right away; each of the 7 keys that follow another on its client
        // replays that one after each of its 2 retries, and once more when it is settled.
        assert_eq!(log.replays.len(), 10 + 7 * 2 + 7);
        assert!(
            log.replays
                .iter()
                .all(|(key, answer)| log.firsts[key] == *answer)
        );
        // Two retries and one success per key.
        let firsts = log.sent.iter().filter(|s| s.purpose == Purpose::First);
        assert_eq!(firsts.count(), 30);
        // t-0: settled in 3, replayed at once, twice while t-3 waits, once after t-3.
        assert_eq!(service.effects.lock().unwrap()["t-0"], 3 + 1 + 2 + 1);
    }

    #[test]
    fn a_key_that_never_settles_stops_at_its_attempt_budget() {
        let service = Flaky {
            fails: u32::MAX,
            effects: Mutex::default(),
        };
        let log = run(&service, &plan(2), Instant::now() + Duration::from_secs(30));
        assert!(log.firsts.is_empty());
        assert!(log.replays.is_empty());
        assert_eq!(log.sent.len(), 2 * 4);
        assert_eq!(service.effects.lock().unwrap()["t-1"], 4);
    }

    /// A service whose first attempt at each key commits but loses its answer: the retry
    /// gets the stored one, marked as a replay.
    struct LostReply {
        seen: Mutex<BTreeMap<String, u32>>,
    }

    impl Service for LostReply {
        fn send(&self, _client: usize, key: &str, _attempt: u32, _deadline: Duration) -> Heard {
            let mut seen = self.seen.lock().unwrap();
            let times = seen.entry(key.to_owned()).or_default();
            *times += 1;
            if *times == 1 {
                Heard::Retry("503".into())
            } else {
                Heard::Definitive {
                    identity: format!("answer of {key}"),
                    replayed: true,
                }
            }
        }
    }

    #[test]
    fn a_key_whose_first_answer_was_lost_is_settled_by_a_replay() {
        let service = LostReply {
            seen: Mutex::default(),
        };
        let log = run(&service, &plan(4), Instant::now() + Duration::from_secs(30));
        assert_eq!(log.firsts.len(), 4);
        assert_eq!(log.settled_by_replay, BTreeSet::from([0, 1, 2, 3]));
        // Its replays are still compared by identity: the marker is not part of it.
        assert!(
            log.replays
                .iter()
                .all(|(key, answer)| log.firsts[key] == *answer)
        );
    }

    #[test]
    fn backoff_grows_to_its_cap() {
        assert_eq!(backoff(0), Duration::from_millis(50));
        assert_eq!(backoff(3), Duration::from_millis(200));
        assert_eq!(backoff(50), Duration::from_millis(500));
    }
}
