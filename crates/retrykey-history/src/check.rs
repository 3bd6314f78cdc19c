//! The history checker: judges a run by what the clients saw and what the server did.
//!
//! It reads only the [`History`](crate::History) and shares no code with the layer or the
//! client, so a bug in either cannot hide itself here. Each rule is stated from the outside:
//! what a person holding the clients' screens and the payments ledger could check by hand.
//!
//! A history of a real server may hold only what its clients saw: no handler runs, no effects.
//! Two rules then read the server's side from the clients' answers: a key's first answer is the
//! first success a client got under it that was not a replay, and the request it is bound to is
//! that attempt's. The rules that count effects or handler runs find nothing to count there;
//! `succeeded-has-one-effect` would call every success a breach, so such a history is judged by
//! the other rules.

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
    /// Every replay carries the status and body of its key's first answer.
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

/// The first 2xx answer a client got under a key that was not a replay.
struct Fresh {
    /// The amount its attempt sent.
    amount: u64,
    status: u16,
    body: String,
}

/// The history, arranged by key and by operation.
#[derive(Default)]
struct Facts {
    effects: BTreeMap<String, Vec<Effect>>,
    /// Status and body of the 2xx answers the handler gave, per key, in order.
    answers: BTreeMap<String, Vec<(u16, String)>>,
    /// Keys some handler run served: the history shows their server side.
    handled: BTreeSet<String>,
    /// Per key, the first 2xx answer a client got that was not a replay.
    fresh: BTreeMap<String, Fresh>,
    /// Per key with an attempt that got no answer, when the first such attempt was sent: an
    /// answer may have gone missing from then on.
    unseen: BTreeMap<String, u64>,
    /// Per key, the replays clients got, in order: the only sight of an answer that went
    /// missing.
    replayed: BTreeMap<String, Vec<(u64, u16, String)>>,
    /// (operation, attempt) -> when it was sent.
    sent_at: BTreeMap<(OpId, u32), u64>,
    /// (operation, attempt) -> (key, amount).
    sent: BTreeMap<(OpId, u32), (String, u64)>,
    /// (operation, attempt) -> (time, reply).
    got: BTreeMap<(OpId, u32), (u64, Reply)>,
    ended: BTreeMap<OpId, (u64, Ended)>,
    abandoned: Vec<(u64, String, u32)>,
    crashed: BTreeSet<u32>,
    /// Foreign key -> the key of the request whose service made the call.
    called: BTreeMap<String, String>,
}

impl Facts {
    fn read(entries: &[Entry]) -> Self {
        let mut facts = Facts::default();
        for entry in entries {
            facts.add(entry);
        }
        facts.attribute_foreign_effects();
        facts
    }

    /// Files each effect made under a foreign key under the request that made the call: what
    /// another service did for an operation counts as that operation's effect.
    fn attribute_foreign_effects(&mut self) {
        for (foreign, key) in &self.called {
            if let Some(effects) = self.effects.remove(foreign) {
                let mine = self.effects.entry(key.clone()).or_default();
                mine.extend(effects);
                mine.sort_by_key(|effect| (effect.at_ms, effect.payment));
            }
        }
    }

    fn add(&mut self, entry: &Entry) {
        match &entry.event {
            HistoryEvent::Effect {
                key,
                amount,
                payment,
            } => self.effects.entry(key.clone()).or_default().push(Effect {
                at_ms: entry.at_ms,
                amount: *amount,
                payment: *payment,
            }),
            HistoryEvent::HandlerStarted { key, .. } => {
                self.handled.insert(key.clone());
            }
            HistoryEvent::HandlerEnded { key, life, end } => {
                self.handled.insert(key.clone());
                match end {
                    HandlerEnd::Answered(status, body) if (200..300).contains(status) => {
                        let answers = self.answers.entry(key.clone()).or_default();
                        answers.push((*status, body.clone()));
                    }
                    HandlerEnd::Abandoned => self.abandoned.push((entry.at_ms, key.clone(), *life)),
                    _ => {}
                }
            }
            HistoryEvent::Sent {
                id,
                attempt,
                key,
                amount,
            } => {
                self.sent.insert((*id, *attempt), (key.clone(), *amount));
                self.sent_at.insert((*id, *attempt), entry.at_ms);
            }
            HistoryEvent::Got { id, attempt, reply } => {
                self.note_fresh(entry.at_ms, *id, *attempt, reply);
                self.got
                    .insert((*id, *attempt), (entry.at_ms, reply.clone()));
            }
            HistoryEvent::Ended { id, how, .. } => {
                self.ended.insert(*id, (entry.at_ms, how.clone()));
            }
            HistoryEvent::Crashed { life } => {
                self.crashed.insert(*life);
            }
            HistoryEvent::Called { key, foreign } => {
                self.called.insert(foreign.clone(), key.clone());
            }
            _ => {}
        }
    }

    /// Keeps the reply as its key's fresh answer if it is the key's first 2xx not replayed;
    /// notes when a key's attempt that got no answer was sent, and every replay under a key.
    fn note_fresh(&mut self, at_ms: u64, id: OpId, attempt: u32, reply: &Reply) {
        let Some((key, amount)) = self.sent.get(&(id, attempt)) else {
            return;
        };
        let (status, body) = match reply {
            Reply::None(_) => {
                let sent = self.sent_at.get(&(id, attempt)).copied().unwrap_or(at_ms);
                let since = self.unseen.entry(key.clone()).or_insert(sent);
                *since = (*since).min(sent);
                return;
            }
            Reply::Answer {
                status,
                body,
                replayed: true,
            } => {
                let replays = self.replayed.entry(key.clone()).or_default();
                replays.push((at_ms, *status, body.clone()));
                return;
            }
            Reply::Answer { status, body, .. } => (status, body),
        };
        if (200..300).contains(status) {
            self.fresh.entry(key.clone()).or_insert_with(|| Fresh {
                amount: *amount,
                status: *status,
                body: body.clone(),
            });
        }
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

    /// A key's first answer: the first 2xx a handler run gave; for a key no handler run shows
    /// (a real server's, seen from its clients), the first 2xx a client got that was not a
    /// replay, or, where an attempt got no answer and none came fresh, the first replay: the
    /// missing answer is known only by what replays it, and later replays must agree.
    fn first_answer(&self, key: &str) -> Option<(u16, &str)> {
        if self.handled.contains(key) {
            let (status, body) = self.answers.get(key)?.first()?;
            Some((*status, body.as_str()))
        } else if let Some(fresh) = self.fresh.get(key) {
            Some((fresh.status, fresh.body.as_str()))
        } else {
            // The first replay after an answer could have gone missing, however late its
            // attempt learned that it had: a client notices a lost answer only when it stops
            // waiting, and another may have had the replay by then.
            let since = *self.unseen.get(key)?;
            let replays = self.replayed.get(key)?;
            let (_, status, body) = replays.iter().find(|(at_ms, ..)| *at_ms >= since)?;
            Some((*status, body.as_str()))
        }
    }

    fn replay_carries_the_first_answer(&self) -> Option<(String, Vec<String>)> {
        self.replays()
            .filter_map(|(at_ms, id, attempt, key, _, status, body)| {
                let replay = format!(
                    "{id} attempt {attempt} at {at_ms} ms: replay of key {} carried {status} {}",
                    short_key(key),
                    body.trim()
                );
                let detail = match self.first_answer(key) {
                    Some(first) if first == (status, body) => return None,
                    Some((first_status, first_body)) => format!(
                        "{replay}, the first answer was {first_status} {}",
                        first_body.trim()
                    ),
                    None if self.handled.contains(key) => {
                        format!("{replay}, but no handler run answered that key with a success")
                    }
                    None => format!(
                        "{replay}, but no attempt under that key got a success that was not a \
                         replay"
                    ),
                };
                Some((at_ms, vec![key.to_owned()], detail))
            })
            .min()
            .map(|(_, keys, detail)| (detail, keys))
    }

    // ANCHOR: changed_request
    /// The request a key is bound to: the amount of its first effect; for a key with no effect
    /// in the history, that of the first attempt that got a 2xx answer that was not a replay.
    fn bound_amount(&self, key: &str) -> Option<u64> {
        match self.effects.get(key) {
            Some(effects) => Some(effects[0].amount),
            None => self.fresh.get(key).map(|fresh| fresh.amount),
        }
    }

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
            let Some(bound) = self.bound_amount(key) else {
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
