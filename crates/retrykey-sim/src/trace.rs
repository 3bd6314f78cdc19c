//! A run's history for people: a timeline in text, and a sequence diagram's source.

use std::collections::BTreeSet;
use std::fmt::Write;

use retrykey_history::{Ended, Entry, HandlerEnd, HistoryEvent, NoReply, OpId, Reply, short_key};

use crate::run::{Finding, FinishedRun};

/// The run's timeline, one line per event: time, host, what happened.
pub fn timeline(run: &FinishedRun) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "seed {} · scenario {} · latency {}-{} ms · replies cut {:.0}% · handler fails {:.0}%",
        run.seed,
        run.scenario,
        run.plan.latency.0.as_millis(),
        run.plan.latency.1.as_millis(),
        run.plan.reply_loss * 100.0,
        run.plan.handler_failure * 100.0,
    );
    for entry in &run.entries {
        if let Some(text) = describe(&entry.event) {
            let _ = writeln!(out, "{:>6} ms  {:<9} {text}", entry.at_ms, entry.host);
        }
    }
    match &run.finding {
        None => {
            let _ = writeln!(
                out,
                "every rule held ({} ms simulated)",
                run.took.as_millis()
            );
        }
        Some(finding) => {
            let _ = writeln!(out, "FAILED seed {}: {finding}", run.seed);
        }
    }
    out
}

fn describe(event: &HistoryEvent) -> Option<String> {
    Some(match event {
        HistoryEvent::Sent {
            id,
            attempt,
            key,
            amount,
        } => format!(
            "-> server  op {} attempt {attempt}: pay {amount}, key {}",
            id.op,
            short_key(key)
        ),
        HistoryEvent::Got { id, attempt, reply } => describe_reply(id.op, *attempt, reply),
        HistoryEvent::Ended { id, attempts, how } => format!(
            "   op {} ended {} after {attempts} attempt(s)",
            id.op,
            match how {
                Ended::Succeeded { replayed: true, .. } => "succeeded (replayed)".to_owned(),
                Ended::Succeeded { .. } => "succeeded".to_owned(),
                Ended::Rejected(status) => format!("rejected ({status})"),
                Ended::Unknown => "UNKNOWN".to_owned(),
            }
        ),
        HistoryEvent::HandlerStarted { key, amount, .. } => {
            format!("handler runs for key {} (pay {amount})", short_key(key))
        }
        HistoryEvent::HandlerEnded { key, end, .. } => describe_handler_end(key, end),
        HistoryEvent::Effect {
            key,
            amount,
            payment,
        } => format!(
            "EFFECT payment {payment}: {amount} for key {}",
            short_key(key)
        ),
        HistoryEvent::Called { key, foreign } => format!(
            "-> provider  charge for key {} under key {}",
            short_key(key),
            short_key(foreign)
        ),
        HistoryEvent::ReplyCut { to, key, status } => {
            format!(
                "answer {status} to {to} for key {} cut off: reply lost",
                short_key(key)
            )
        }
        HistoryEvent::Fault(what) => what.clone(),
        HistoryEvent::Crashed { life } => format!("CRASHED (life {life} ends, its memory with it)"),
        HistoryEvent::Restarted { life } => format!("restarted (life {life})"),
    })
}

/// What a client got for one attempt: an answer, or why there was none.
fn describe_reply(op: u32, attempt: u32, reply: &Reply) -> String {
    match reply {
        Reply::Answer {
            status,
            body,
            replayed,
        } => format!(
            "<- server  op {op} attempt {attempt}: {status}{} {}",
            if *replayed { " replayed" } else { "" },
            body.trim()
        ),
        Reply::None(why) => format!(
            "   op {op} attempt {attempt}: no answer ({})",
            no_reply(*why)
        ),
    }
}

/// How a handler run for `key` ended.
fn describe_handler_end(key: &str, end: &HandlerEnd) -> String {
    match end {
        HandlerEnd::Answered(status, _) => {
            format!("handler answered {status} for key {}", short_key(key))
        }
        HandlerEnd::Failed(status) => {
            format!(
                "handler failed {status} before its effect, key {}",
                short_key(key)
            )
        }
        HandlerEnd::Abandoned => format!("handler run DROPPED, key {}", short_key(key)),
    }
}

fn no_reply(why: NoReply) -> &'static str {
    match why {
        NoReply::Refused => "connection refused",
        NoReply::Cut => "connection cut",
        NoReply::GaveUp => "gave up waiting, disconnected",
    }
}

/// The run as a sequence diagram, in the `.diag` language of the book's diagrams: one lane per
/// host, an arrow per message, a crossed arrow per lost answer. A failing run is drawn around
/// the keys its broken rule names (their operations, effects and lost answers, and the
/// server's crashes), so the picture shows the failure rather than the whole run.
pub fn diagram(run: &FinishedRun) -> String {
    let focus: Option<&[String]> = match &run.finding {
        Some(Finding::Broke(violation)) if !violation.keys.is_empty() => Some(&violation.keys),
        _ => None,
    };
    let entries = drawn_entries(run, focus);
    let mut out = String::new();
    let _ = writeln!(out, "kind sequence");
    let _ = writeln!(
        out,
        "title \"Seed {} of {}{}\"",
        run.seed,
        run.scenario,
        match &run.finding {
            None => String::new(),
            Some(finding) => format!(": {}", label(&first_words(&finding.to_string()))),
        }
    );
    let _ = writeln!(
        out,
        "desc \"The timeline of seed {} in scenario {}{}: each attempt, each answer or its loss, \
         each payment, and the server's crashes and restarts.\"",
        run.seed,
        run.scenario,
        if focus.is_some() {
            ", drawn around the keys of the broken rule"
        } else {
            ""
        }
    );
    // Clients on the left, then the server, then the bank or provider it charges.
    let mut hosts: BTreeSet<&str> = entries.iter().map(|e| e.host.as_str()).collect();
    hosts.insert("server");
    if (entries.iter()).any(|e| matches!(e.event, HistoryEvent::Called { .. })) {
        hosts.insert("provider");
    }
    let mut hosts: Vec<&str> = hosts.into_iter().collect();
    let charges = |host: &str| host == "bank" || host == "provider";
    hosts.sort_by_key(|host| (charges(host), *host == "server", *host));
    for host in &hosts {
        let _ = writeln!(out, "lane {} \"{host}\"", lane(host));
    }
    for line in entries.into_iter().filter_map(diagram_line) {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// The entries a diagram draws: with a `focus`, only the operations, effects and lost answers
/// of those keys and of the foreign keys their requests called under; always the server's
/// crashes and restarts; never the handler's start or a network fault.
fn drawn_entries<'a>(run: &'a FinishedRun, focus: Option<&[String]>) -> Vec<&'a Entry> {
    let called: Vec<String> = run
        .entries
        .iter()
        .filter_map(|entry| match &entry.event {
            HistoryEvent::Called { key, foreign } if focus.is_some_and(|k| k.contains(key)) => {
                Some(foreign.clone())
            }
            _ => None,
        })
        .collect();
    let focused =
        |key: &String| focus.is_none_or(|keys| keys.contains(key) || called.contains(key));
    let ops: BTreeSet<OpId> = run
        .entries
        .iter()
        .filter_map(|entry| match &entry.event {
            HistoryEvent::Sent { id, key, .. } if focus.is_none_or(|keys| keys.contains(key)) => {
                Some(*id)
            }
            _ => None,
        })
        .collect();
    let shown = |event: &HistoryEvent| match event {
        HistoryEvent::Sent { id, .. }
        | HistoryEvent::Got { id, .. }
        | HistoryEvent::Ended { id, .. } => ops.contains(id),
        HistoryEvent::Effect { key, .. }
        | HistoryEvent::ReplyCut { key, .. }
        | HistoryEvent::Called { key, .. }
        | HistoryEvent::HandlerEnded { key, .. } => focused(key),
        HistoryEvent::Crashed { .. } | HistoryEvent::Restarted { .. } => true,
        HistoryEvent::HandlerStarted { .. } | HistoryEvent::Fault(_) => false,
    };
    run.entries.iter().filter(|e| shown(&e.event)).collect()
}

/// One entry as a line of the diagram: a message, an action or a note on its host's lane;
/// `None` for what a diagram does not draw.
fn diagram_line(entry: &Entry) -> Option<String> {
    let at = entry.at_ms;
    let client = lane(&entry.host);
    Some(match &entry.event {
        HistoryEvent::Sent {
            id,
            attempt,
            key,
            amount,
        } => format!(
            "msg {client} server \"{at} ms op {} #{attempt}: pay {amount}, key {}\"",
            id.op,
            short_key(key)
        ),
        HistoryEvent::Got { id, attempt, reply } => {
            let what = format!("{at} ms op {} #{attempt}", id.op);
            match reply {
                Reply::Answer {
                    status, replayed, ..
                } => format!(
                    "msg server {client} \"{what}: {status}{}\"",
                    if *replayed { " replayed" } else { "" }
                ),
                Reply::None(why) => format!("act {client} \"{what}: {}\"", no_reply(*why)),
            }
        }
        HistoryEvent::Ended { id, how, .. } => {
            format!("act {client} \"op {} {}\"", id.op, diagram_ending(how))
        }
        HistoryEvent::Effect {
            key,
            amount,
            payment,
        } => format!(
            "note {client} \"{at} ms payment {payment}: {amount}, key {}\"",
            short_key(key)
        ),
        HistoryEvent::Called { foreign, .. } => format!(
            "msg {client} provider \"{at} ms charge, key {}\"",
            short_key(foreign)
        ),
        HistoryEvent::ReplyCut { to, key, status } => format!(
            "lost {client} {} \"{at} ms {status} for key {}, cut\"",
            lane(to),
            short_key(key)
        ),
        HistoryEvent::HandlerEnded {
            key,
            end: HandlerEnd::Abandoned,
            ..
        } => format!(
            "act {client} \"{at} ms handler dropped, key {}\"",
            short_key(key)
        ),
        HistoryEvent::Crashed { .. } => format!("act server \"{at} ms crashed\""),
        HistoryEvent::Restarted { .. } => format!("act server \"{at} ms restarted\""),
        _ => return None,
    })
}

/// How an operation ended, as the diagram's note says it.
fn diagram_ending(how: &Ended) -> String {
    match how {
        Ended::Succeeded { .. } => "succeeded".to_owned(),
        Ended::Rejected(status) => format!("rejected {status}"),
        Ended::Unknown => "outcome unknown".to_owned(),
    }
}

fn lane(host: &str) -> String {
    host.replace('-', "")
}

fn label(text: &str) -> String {
    text.replace('"', "'")
}

fn first_words(text: &str) -> String {
    text.split(':').next().unwrap_or(text).to_owned()
}
