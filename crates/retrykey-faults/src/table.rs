//! One row per scenario: what the burst's clients saw and what the store holds, judged against
//! the identities a fault must not break, and printed as one table.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use crate::burst::{BurstPlan, Heard, Log, Purpose};

/// When a fault was done to the service: from its first blow to the moment it was over (the
/// server back up, the last connection severed, the last COMMIT's reply cut).
#[derive(Clone, Copy, Debug)]
pub struct Window {
    /// The first blow.
    pub start: Instant,
    /// The fault over.
    pub end: Instant,
}

/// A check of one scenario beyond the table's columns (the server's pid, the file's integrity).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extra {
    /// What was checked, as a failure names it.
    pub what: String,
    /// Whether it held.
    pub held: bool,
}

/// One scenario's figures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultRow {
    /// The service and the fault.
    pub scenario: String,
    /// Keys sent.
    pub keys: usize,
    /// Keys with a definitive answer.
    pub settled: usize,
    /// Effects the store or ledger holds (charges, records), read after the burst.
    pub effects: Option<u64>,
    /// Replays equal to their key's first answer.
    pub identical: usize,
    /// Definitive replays in all.
    pub replays: usize,
    /// Answers that said "retry" (503 or 409 with `Retry-After`, the ledger's `err`), to first
    /// attempts and replays alike: what the fault cost the clients, in attempts.
    pub retried: usize,
    /// How long the fault lasted, from its first blow to its end, if one was done.
    pub fault: Option<Duration>,
    /// From the fault's end to the first key settled after it (a write that went through):
    /// how long the service took to write again.
    pub reconnect: Option<Duration>,
    /// The longest request.
    pub longest: Duration,
    /// Requests without an answer within their deadline.
    pub past_deadline: usize,
    /// Answers outside the contract, with the first one seen.
    pub wrong: (usize, Option<String>),
    /// The scenario's own checks.
    pub extras: Vec<Extra>,
}

impl FaultRow {
    /// The row of a burst run with `plan`, which left `log`, during `fault`; `effects` as read
    /// from the store afterwards.
    pub fn new(
        scenario: &str,
        plan: &BurstPlan,
        log: &Log,
        effects: Option<u64>,
        fault: Option<Window>,
    ) -> Self {
        let identical = log
            .replays
            .iter()
            .filter(|(key, answer)| log.firsts.get(key) == Some(answer))
            .count();
        let wrong: Vec<&String> = log
            .sent
            .iter()
            .filter_map(|sent| match &sent.answer {
                Heard::Wrong(what) => Some(what),
                _ => None,
            })
            .collect();
        Self {
            scenario: scenario.to_owned(),
            keys: plan.keys,
            settled: log.firsts.len(),
            effects,
            identical,
            replays: log.replays.len(),
            retried: log
                .sent
                .iter()
                .filter(|sent| matches!(sent.answer, Heard::Retry(_)))
                .count(),
            fault: fault.map(|fault| fault.end - fault.start),
            reconnect: fault.and_then(|fault| reconnect(log, fault)),
            longest: log.sent.iter().map(|s| s.took).max().unwrap_or_default(),
            past_deadline: log
                .sent
                .iter()
                .filter(|s| s.answer == Heard::TimedOut || s.took > plan.deadline)
                .count(),
            wrong: (wrong.len(), wrong.first().map(|what| (*what).clone())),
            extras: Vec::new(),
        }
    }

    /// Adds a check of the scenario's own.
    pub fn check(mut self, what: impl Into<String>, held: bool) -> Self {
        self.extras.push(Extra {
            what: what.into(),
            held,
        });
        self
    }

    /// Every way the row fails; empty when it passes.
    pub fn failures(&self) -> Vec<String> {
        let mut failures = Vec::new();
        if self.settled != self.keys {
            let open = self.keys - self.settled.min(self.keys);
            failures.push(format!("{open} of {} keys never settled", self.keys));
        }
        match self.effects {
            Some(effects) if effects == self.keys as u64 => {}
            Some(effects) => failures.push(format!("{effects} effects for {} keys", self.keys)),
            None => failures.push("the effects could not be read".to_owned()),
        }
        if self.replays == 0 {
            failures.push("no replay was answered".to_owned());
        } else if self.identical != self.replays {
            let differ = self.replays - self.identical;
            failures.push(format!("{differ} replays differ from their first answer"));
        }
        if self.fault.is_some() && self.reconnect.is_none() {
            failures.push("no key was settled after the fault".to_owned());
        }
        if self.past_deadline > 0 {
            failures.push(format!(
                "{} requests past their deadline",
                self.past_deadline
            ));
        }
        if let (count @ 1.., first) = &self.wrong {
            let first = first.as_deref().unwrap_or_default();
            failures.push(format!(
                "{count} answers outside the contract (first: {first})"
            ));
        }
        failures.extend(
            self.extras
                .iter()
                .filter(|extra| !extra.held)
                .map(|extra| extra.what.clone()),
        );
        failures
    }
}

/// From the fault's end to the first answer after it that settled a key: how long the service
/// took to write again (a replay is a read, and may be served all through the fault). `None`:
/// it never did.
fn reconnect(log: &Log, fault: Window) -> Option<Duration> {
    log.sent
        .iter()
        .filter(|sent| {
            sent.purpose == Purpose::First && matches!(sent.answer, Heard::Definitive { .. })
        })
        .filter_map(|sent| (sent.start + sent.took).checked_duration_since(fault.end))
        .min()
}

/// What the clients saw while a fault lasted: the requests sent between its start and its end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct During {
    /// Requests sent.
    pub sent: usize,
    /// Of those, answered "retry".
    pub retried: usize,
    /// Replays of settled keys sent.
    pub replays_sent: usize,
    /// Of those, answered definitively.
    pub replays_served: usize,
}

impl During {
    /// The requests of `log` sent during `fault`.
    pub fn of(log: &Log, fault: Window) -> Self {
        let mut during = Self::default();
        let inside = log
            .sent
            .iter()
            .filter(|sent| sent.start >= fault.start && sent.start < fault.end);
        for sent in inside {
            during.sent += 1;
            let definitive = matches!(sent.answer, Heard::Definitive { .. });
            during.retried += usize::from(matches!(sent.answer, Heard::Retry(_)));
            if sent.purpose == Purpose::Replay {
                during.replays_sent += 1;
                during.replays_served += usize::from(definitive);
            }
        }
        during
    }
}

/// Milliseconds, as the table shows durations.
fn ms(duration: Duration) -> String {
    format!("{} ms", duration.as_millis())
}

/// The table of `rows`, with a verdict per row and each failure spelled out under it.
pub fn render(rows: &[FaultRow]) -> String {
    let mut out = format!(
        "{:<31} {:>5} {:>7} {:>7} {:>16} {:>9} {:>10} {:>9} {:>14}  {}\n",
        "scenario",
        "keys",
        "effects",
        "retried",
        "replays",
        "fault",
        "reconnect",
        "longest",
        "past deadline",
        "verdict"
    );
    for row in rows {
        let failures = row.failures();
        let replays = format!(
            "{} {}/{}",
            if row.identical == row.replays && row.replays > 0 {
                "yes"
            } else {
                "no"
            },
            row.identical,
            row.replays
        );
        let _ = writeln!(
            out,
            "{:<31} {:>5} {:>7} {:>7} {:>16} {:>9} {:>10} {:>9} {:>14}  {}",
            row.scenario,
            row.keys,
            row.effects.map_or("?".to_owned(), |e| e.to_string()),
            row.retried,
            replays,
            row.fault.map_or("-".to_owned(), ms),
            row.reconnect.map_or("-".to_owned(), ms),
            ms(row.longest),
            row.past_deadline,
            if failures.is_empty() { "ok" } else { "FAILED" }
        );
        for failure in failures {
            let _ = writeln!(out, "    {}: {failure}", row.scenario);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::burst::SentRequest;

    fn plan() -> BurstPlan {
        BurstPlan {
            keys: 2,
            clients: 1,
            prefix: "t".into(),
            deadline: Duration::from_secs(2),
            max_attempts: 3,
            pace: Duration::ZERO,
        }
    }

    fn settled(identity: &str) -> Heard {
        Heard::Definitive {
            identity: identity.into(),
            replayed: false,
        }
    }

    fn sent(key: usize, start: Instant, took_ms: u64, answer: Heard) -> SentRequest {
        SentRequest {
            key,
            purpose: Purpose::First,
            start,
            took: Duration::from_millis(took_ms),
            answer,
        }
    }

    /// Two keys settled once each and replayed identically, one retry during the fault.
    fn clean_log(at: Instant) -> Log {
        let mut log = Log::default();
        log.sent.push(sent(0, at, 10, settled("a")));
        log.sent.push(sent(
            1,
            at + Duration::from_millis(100),
            30,
            Heard::Retry("503".into()),
        ));
        log.sent
            .push(sent(1, at + Duration::from_millis(400), 20, settled("b")));
        log.firsts
            .extend([(0, "a".to_owned()), (1, "b".to_owned())]);
        log.replays
            .extend([(0, "a".to_owned()), (1, "b".to_owned())]);
        log
    }

    #[test]
    fn a_clean_burst_passes_with_its_figures() {
        let at = Instant::now();
        let fault = Window {
            start: at + Duration::from_millis(50),
            end: at + Duration::from_millis(300),
        };
        let row = FaultRow::new("x", &plan(), &clean_log(at), Some(2), Some(fault));
        assert_eq!(row.failures(), Vec::<String>::new());
        assert_eq!((row.settled, row.identical, row.replays), (2, 2, 2));
        assert_eq!(row.retried, 1);
        assert_eq!(row.fault, Some(Duration::from_millis(250)));
        // Sent at 400 ms, answered at 420 ms; the fault ended at 300 ms.
        assert_eq!(row.reconnect, Some(Duration::from_millis(120)));
        assert_eq!(row.longest, Duration::from_millis(30));
        assert!(render(&[row]).contains(" ok\n"));
    }

    #[test]
    fn a_second_effect_for_one_key_fails() {
        let log = clean_log(Instant::now());
        let row = FaultRow::new("x", &plan(), &log, Some(3), None);
        assert_eq!(row.failures(), ["3 effects for 2 keys"]);
        assert!(render(&[row]).contains("FAILED"));
    }

    #[test]
    fn a_replay_that_differs_fails() {
        let mut log = clean_log(Instant::now());
        log.replays.push((1, "c".into()));
        let row = FaultRow::new("x", &plan(), &log, Some(2), None);
        assert_eq!((row.identical, row.replays), (2, 3));
        assert_eq!(row.failures(), ["1 replays differ from their first answer"]);
    }

    #[test]
    fn timeouts_wrong_answers_and_open_keys_each_fail() {
        let at = Instant::now();
        let mut log = clean_log(at);
        log.firsts.remove(&1);
        log.replays.retain(|(key, _)| *key != 1);
        log.sent.push(sent(1, at, 2000, Heard::TimedOut));
        log.sent.push(sent(1, at, 5, Heard::Wrong("500".into())));
        let row = FaultRow::new("x", &plan(), &log, Some(1), None).check("server up", false);
        assert_eq!(
            row.failures(),
            [
                "1 of 2 keys never settled",
                "1 effects for 2 keys",
                "1 requests past their deadline",
                "1 answers outside the contract (first: 500)",
                "server up",
            ]
        );
    }

    #[test]
    fn during_counts_only_what_was_sent_inside_the_window() {
        let at = Instant::now();
        let mut log = clean_log(at);
        let mut replay = sent(0, at + Duration::from_millis(150), 5, settled("a"));
        replay.purpose = Purpose::Replay;
        log.sent.push(replay);
        let fault = Window {
            start: at + Duration::from_millis(50),
            end: at + Duration::from_millis(300),
        };
        // The retry at 100 ms and the replay at 150 ms; not the successes at 0 and 400 ms.
        let during = During::of(&log, fault);
        assert_eq!(
            during,
            During {
                sent: 2,
                retried: 1,
                replays_sent: 1,
                replays_served: 1,
            }
        );
    }

    #[test]
    fn no_key_settled_after_the_fault_means_no_reconnect() {
        let at = Instant::now();
        let fault = Window {
            start: at,
            end: at + Duration::from_secs(10),
        };
        // A replay served after the fault is a read: it shows no write went through.
        let mut log = clean_log(at);
        let mut replay = sent(0, at + Duration::from_secs(11), 5, settled("a"));
        replay.purpose = Purpose::Replay;
        log.sent.push(replay);
        let row = FaultRow::new("x", &plan(), &log, Some(2), Some(fault));
        assert_eq!(row.reconnect, None);
        assert_eq!(row.failures(), ["no key was settled after the fault"]);
        assert!(render(&[row]).contains(" - "));
    }
}
