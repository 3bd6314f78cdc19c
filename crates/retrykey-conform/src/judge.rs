//! A session's keyed exchanges as a history, judged by the rules that judge a simulated run.
//!
//! The kit sees only what a client sees: what it sent under which key, and what came back.
//! So the history holds attempts and their replies, with no handler runs and no per-key
//! effects; the shared rules that read only those (a replay carries the first answer, a
//! changed request gets no success) decide it exactly as they decide a simulated history.

use retrykey_history::{Entry, HistoryEvent, NoReply, OpId, Reply, violations};

use crate::profile::{ErrorPolicy, Profile};
use crate::session::{Breach, Ending, Exchange, marked_replay};

/// The history of `exchanges`: each keyed attempt sent, and what it got.
pub fn history(profile: &Profile, exchanges: &[Exchange]) -> Vec<Entry> {
    let mut entries = Vec::new();
    for exchange in exchanges {
        let Some((op, attempt)) = &exchange.attempt else {
            continue;
        };
        // The first caller, or none, is client 1: the rules tell callers apart by their keys.
        let id = OpId {
            client: op.caller.max(1) as u32,
            op: op.id,
        };
        let host = format!("client-{}", id.client);
        let sent = HistoryEvent::Sent {
            id,
            attempt: *attempt,
            key: op.judged_key(),
            amount: op.identity(profile),
        };
        let reply = match &exchange.outcome {
            Ending::Answered(answer) => Reply::Answer {
                status: answer.status,
                body: profile.comparable(&answer.body),
                replayed: marked_replay(profile, answer) && !kept_error(profile, answer.status),
            },
            Ending::Left => Reply::None(NoReply::GaveUp),
            Ending::Failed(_) => Reply::None(NoReply::Cut),
        };
        let got = HistoryEvent::Got {
            id,
            attempt: *attempt,
            reply,
        };
        // A reply is had when it arrives: a duplicate that waited may carry the answer of an
        // attempt sent after it.
        let answered_ms = exchange.at_ms + exchange.took_ms;
        for (at_ms, event) in [(exchange.at_ms, sent), (answered_ms, got)] {
            entries.push(Entry {
                at_ms,
                host: host.clone(),
                event,
            });
        }
    }
    entries.sort_by_key(|entry| entry.at_ms);
    entries
}

/// Whether `status` is a 5xx that the profile keeps as its key's answer: its replay repeats a
/// failure, and the rules (whose replays carry a first success) read it as that failure.
fn kept_error(profile: &Profile, status: u16) -> bool {
    let policy = profile.fail_once.as_ref().map(|f| f.policy);
    status >= 500 && policy == Some(ErrorPolicy::Replay)
}

/// Every shared rule the session's history breaks, each with the exchanges of its keys.
pub fn judge(profile: &Profile, exchanges: &[Exchange]) -> Vec<Breach> {
    violations(&history(profile, exchanges))
        .into_iter()
        .map(|violation| {
            let shown: Vec<usize> = exchanges
                .iter()
                .filter(|exchange| {
                    exchange
                        .attempt
                        .as_ref()
                        .is_some_and(|(op, _)| violation.keys.contains(&op.judged_key()))
                })
                .map(|exchange| exchange.number)
                .collect();
            Breach::new(format!("shared rule {violation}"), &shown)
        })
        .collect()
}
