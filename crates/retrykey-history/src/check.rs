//! The history checker: judges a run by what the clients saw and what the server did.
//!
//! It reads only the [`History`](crate::History) and shares no code with the layer or the
//! client, so a bug in either cannot hide itself here. Each rule is stated from the outside:
//! what a person holding the clients' screens and the payments ledger could check by hand.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::history::{Ended, Entry, HandlerEnd, HistoryEvent, NoReply, OpId, Reply, short_key};

// ANCHOR: rules
/// A rule every run must keep, in the order the checker tries them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rule {
    /// At most one effect per key.
    OneEffectPerKey,
    /// Every operation reported succeeded made exactly one effect.
    SucceededHasOneEffect,
    /// Every replay carries the body of the answer that made the key's effect.
    ReplayCarriesTheFirstAnswer,
    /// A changed request under a used key makes no effect and gets no replay.
    ChangedRequestChangesNothing,
    /// An operation is reported unknown only where an answer went missing.
    UnknownOnlyWhereAnAnswerWasLost,
    /// A handler run ends (answers or fails) unless its host crashed under it.
    HandlerRunsToTheEnd,
}
// ANCHOR_END: rules

impl Rule {
    /// Every rule, in the order they are checked.
    pub const ALL: [Rule; 6] = [
        Rule::OneEffectPerKey,
        Rule::SucceededHasOneEffect,
        Rule::ReplayCarriesTheFirstAnswer,
        Rule::ChangedRequestChangesNothing,
        Rule::UnknownOnlyWhereAnAnswerWasLost,
        Rule::HandlerRunsToTheEnd,
    ];

    /// The rule's short name, as the simulator prints it.
    pub fn name(self) -> &'static str {
        match self {
            Rule::OneEffectPerKey => "one-effect-per-key",
            Rule::SucceededHasOneEffect => "succeeded-has-one-effect",
            Rule::ReplayCarriesTheFirstAnswer => "replay-carries-the-first-answer",
            Rule::ChangedRequestChangesNothing => "changed-request-changes-nothing",
            Rule::UnknownOnlyWhereAnAnswerWasLost => "unknown-only-where-an-answer-was-lost",
            Rule::HandlerRunsToTheEnd => "handler-runs-to-the-end",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A broken rule, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The rule.
    pub rule: Rule,
    /// What broke it, naming operations, keys and times.
    pub detail: String,
    /// The keys the breach concerns, whole.
    pub keys: Vec<String>,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.rule, self.detail)
    }
}

/// The first broken rule (in [`Rule::ALL`]'s order) and its earliest breach, or `Ok`.
pub fn judge(entries: &[Entry]) -> Result<(), Violation> {
    match violations(entries).into_iter().next() {
        Some(violation) => Err(violation),
        None => Ok(()),
    }
}

/// Every broken rule, each with its earliest breach, in [`Rule::ALL`]'s order.
pub fn violations(entries: &[Entry]) -> Vec<Violation> {
    let facts = Facts::read(entries);
    Rule::ALL
        .iter()
        .filter_map(|&rule| {
            facts
                .breach(rule)
                .map(|(detail, keys)| Violation { rule, detail, keys })
        })
        .collect()
}

struct Effect {
    at_ms: u64,
    amount: u64,
    payment: u64,
}

/// The history, arranged by key and by operation.
#[derive(Default)]
struct Facts {
    effects: BTreeMap<String, Vec<Effect>>,
    /// Bodies of 2xx answers the handler gave, per key, in order.
    answers: BTreeMap<String, Vec<String>>,
    /// (operation, attempt) -> (key, amount).
    sent: BTreeMap<(OpId, u32), (String, u64)>,
    /// (operation, attempt) -> (time, reply).
    got: BTreeMap<(OpId, u32), (u64, Reply)>,
    ended: BTreeMap<OpId, (u64, Ended)>,
    abandoned: Vec<(u64, String, u32)>,
    crashed: BTreeSet<u32>,
}

impl Facts {
    fn read(entries: &[Entry]) -> Self {
        let mut facts = Facts::default();
        for entry in entries {
            match &entry.event {
                HistoryEvent::Effect {
                    key,
                    amount,
                    payment,
                } => facts.effects.entry(key.clone()).or_default().push(Effect {
                    at_ms: entry.at_ms,
                    amount: *amount,
                    payment: *payment,
                }),
                HistoryEvent::HandlerEnded { key, life, end } => match end {
                    HandlerEnd::Answered(status, body) if (200..300).contains(status) => {
                        facts
                            .answers
                            .entry(key.clone())
                            .or_default()
                            .push(body.clone());
                    }
                    HandlerEnd::Abandoned => {
                        facts.abandoned.push((entry.at_ms, key.clone(), *life));
                    }
                    _ => {}
                },
                HistoryEvent::Sent {
                    id,
                    attempt,
                    key,
                    amount,
                } => {
                    facts.sent.insert((*id, *attempt), (key.clone(), *amount));
                }
                HistoryEvent::Got { id, attempt, reply } => {
                    facts
                        .got
                        .insert((*id, *attempt), (entry.at_ms, reply.clone()));
                }
                HistoryEvent::Ended { id, how, .. } => {
                    facts.ended.insert(*id, (entry.at_ms, how.clone()));
                }
                HistoryEvent::Crashed { life } => {
                    facts.crashed.insert(*life);
                }
                _ => {}
            }
        }
        facts
    }

    fn breach(&self, rule: Rule) -> Option<(String, Vec<String>)> {
        match rule {
            Rule::OneEffectPerKey => self.one_effect_per_key(),
            Rule::SucceededHasOneEffect => self.succeeded_has_one_effect(),
            Rule::ReplayCarriesTheFirstAnswer => self.replay_carries_the_first_answer(),
            Rule::ChangedRequestChangesNothing => self.changed_request_changes_nothing(),
            Rule::UnknownOnlyWhereAnAnswerWasLost => self.unknown_only_where_lost(),
            Rule::HandlerRunsToTheEnd => self.handler_runs_to_the_end(),
        }
    }

    // ANCHOR: one_effect_per_key
    fn one_effect_per_key(&self) -> Option<(String, Vec<String>)> {
        self.effects
            .iter()
            .filter(|(_, effects)| effects.len() > 1)
            .min_by_key(|(_, effects)| effects[1].at_ms)
            .map(|(key, effects)| {
                let payments: Vec<String> = effects
                    .iter()
                    .map(|e| format!("payment {} at {} ms", e.payment, e.at_ms))
                    .collect();
                let detail = format!(
                    "key {} made {} effects: {}",
                    short_key(key),
                    effects.len(),
                    payments.join(", ")
                );
                (detail, vec![key.clone()])
            })
    }
    // ANCHOR_END: one_effect_per_key

    fn keys_of(&self, id: OpId) -> BTreeSet<&str> {
        self.sent
            .range((id, 0)..=(id, u32::MAX))
            .map(|(_, (key, _))| key.as_str())
            .collect()
    }

    fn succeeded_has_one_effect(&self) -> Option<(String, Vec<String>)> {
        self.ended
            .iter()
            .filter(|(_, (_, how))| matches!(how, Ended::Succeeded { .. }))
            .filter_map(|(&id, &(at_ms, _))| {
                let keys = self.keys_of(id);
                let count: usize = keys
                    .iter()
                    .map(|key| self.effects.get(*key).map_or(0, Vec::len))
                    .sum();
                (count != 1).then(|| {
                    let shown: Vec<&str> = keys.iter().map(|key| short_key(key)).collect();
                    let detail = format!(
                        "{id} succeeded at {at_ms} ms with {count} effects under {} key(s): {}",
                        shown.len(),
                        shown.join(", ")
                    );
                    (at_ms, detail, keys.iter().map(|k| k.to_string()).collect())
                })
            })
            .min()
            .map(|(_, detail, keys)| (detail, keys))
    }

    /// Each attempt that got a replayed answer, with its key and amount.
    fn replays(&self) -> impl Iterator<Item = (u64, OpId, u32, &str, u64, u16, &str)> {
        self.got
            .iter()
            .filter_map(|(&(id, attempt), (at_ms, reply))| {
                let Reply::Answer {
                    status,
                    body,
                    replayed: true,
                } = reply
                else {
                    return None;
                };
                let (key, amount) = self.sent.get(&(id, attempt))?;
                Some((
                    *at_ms,
                    id,
                    attempt,
                    key.as_str(),
                    *amount,
                    *status,
                    body.as_str(),
                ))
            })
    }

    fn replay_carries_the_first_answer(&self) -> Option<(String, Vec<String>)> {
        self.replays()
            .filter_map(|(at_ms, id, attempt, key, _, status, body)| {
                let first = self.answers.get(key).and_then(|bodies| bodies.first());
                match first {
                    Some(first) if first == body => None,
                    Some(first) => Some((
                        at_ms,
                        vec![key.to_owned()],
                        format!(
                            "{id} attempt {attempt} at {at_ms} ms: replay of key {} carried \
                             {status} {}, the first answer was {}",
                            short_key(key),
                            body.trim(),
                            first.trim()
                        ),
                    )),
                    None => Some((
                        at_ms,
                        vec![key.to_owned()],
                        format!(
                            "{id} attempt {attempt} at {at_ms} ms: replay of key {} carried \
                             {status} {}, but no handler run answered that key with a success",
                            short_key(key),
                            body.trim()
                        ),
                    )),
                }
            })
            .min()
            .map(|(_, keys, detail)| (detail, keys))
    }

    // ANCHOR: changed_request
    fn changed_request_changes_nothing(&self) -> Option<(String, Vec<String>)> {
        let mut breaches = Vec::new();
        for (key, effects) in &self.effects {
            let bound = effects[0].amount;
            for effect in &effects[1..] {
                if effect.amount != bound {
                    breaches.push((
                        effect.at_ms,
                        key.clone(),
                        format!(
                            "key {} was used for amount {bound}, then a request for {} made \
                             payment {} at {} ms",
                            short_key(key),
                            effect.amount,
                            effect.payment,
                            effect.at_ms
                        ),
                    ));
                }
            }
        }
        for (&(id, attempt), (at_ms, reply)) in &self.got {
            let Reply::Answer { status, .. } = reply else {
                continue;
            };
            let Some((key, amount)) = self.sent.get(&(id, attempt)) else {
                continue;
            };
            let Some(bound) = self.effects.get(key).map(|effects| effects[0].amount) else {
                continue;
            };
            if (200..300).contains(status) && *amount != bound {
                breaches.push((
                    *at_ms,
                    key.clone(),
                    format!(
                        "{id} attempt {attempt} at {at_ms} ms asked for {amount} under key {}, \
                         used for {bound}, and got {status}: another request's answer",
                        short_key(key)
                    ),
                ));
            }
        }
        breaches
            .into_iter()
            .min()
            .map(|(_, key, detail)| (detail, vec![key]))
    }
    // ANCHOR_END: changed_request

    fn unknown_only_where_lost(&self) -> Option<(String, Vec<String>)> {
        self.ended
            .iter()
            .filter(|(_, (_, how))| *how == Ended::Unknown)
            .filter_map(|(&id, &(at_ms, _))| {
                let replies: Vec<&Reply> = self
                    .got
                    .range((id, 0)..=(id, u32::MAX))
                    .map(|(_, (_, reply))| reply)
                    .collect();
                let missing = replies.iter().any(|reply| match reply {
                    Reply::None(NoReply::Refused | NoReply::Cut | NoReply::GaveUp) => true,
                    // A server error or "still in progress" says nothing about the effect.
                    Reply::Answer { status, .. } => *status >= 500 || *status == 409,
                });
                (!missing).then(|| {
                    let statuses: Vec<String> = replies
                        .iter()
                        .map(|reply| match reply {
                            Reply::Answer { status, .. } => status.to_string(),
                            Reply::None(why) => format!("{why:?}"),
                        })
                        .collect();
                    let keys = self.keys_of(id).into_iter().map(str::to_owned).collect();
                    (
                        at_ms,
                        keys,
                        format!(
                            "{id} was reported unknown at {at_ms} ms, yet every attempt got a \
                             definite answer ({})",
                            statuses.join(", ")
                        ),
                    )
                })
            })
            .min()
            .map(|(_, keys, detail): (u64, Vec<String>, String)| (detail, keys))
    }

    fn handler_runs_to_the_end(&self) -> Option<(String, Vec<String>)> {
        self.abandoned
            .iter()
            .find(|(_, _, life)| !self.crashed.contains(life))
            .map(|(at_ms, key, life)| {
                let detail = format!(
                    "the handler run for key {} was dropped at {at_ms} ms while the server \
                     (life {life}) was up: a client that left cancelled it",
                    short_key(key)
                );
                (detail, vec![key.clone()])
            })
    }
}
