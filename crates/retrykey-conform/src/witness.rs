//! A witness: the few exchanges that show a broken rule, written as a reader checks them.

use serde::Serialize;

use crate::profile::Profile;
use crate::session::{Ending, Exchange, IDEMPOTENCY_KEY};

/// The most exchanges a witness shows.
pub const MAX_WITNESS: usize = 10;

/// The longest header value or body a witness line shows whole.
const SHOWN_CHARS: usize = 72;

/// One exchange of a witness: what was sent and what came back, each on one line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WitnessLine {
    /// The exchange's number in its run.
    pub number: usize,
    /// Milliseconds since the run began.
    pub at_ms: u64,
    /// The request: method, path, the headers that vary, the body.
    pub sent: String,
    /// The answer: status, replay marker, kept headers, body; or why there was none.
    pub got: String,
}

/// The exchanges numbered in `shown`, in the order they were sent: at most [`MAX_WITNESS`],
/// taken in `shown`'s order (the first breach's exchanges first).
pub fn witness(profile: &Profile, exchanges: &[Exchange], shown: &[usize]) -> Vec<WitnessLine> {
    let mut numbers: Vec<usize> = Vec::new();
    for number in shown {
        if !numbers.contains(number) && numbers.len() < MAX_WITNESS {
            numbers.push(*number);
        }
    }
    numbers.sort_unstable();
    numbers
        .iter()
        .filter_map(|number| exchanges.iter().find(|e| e.number == *number))
        .map(|exchange| WitnessLine {
            number: exchange.number,
            at_ms: exchange.at_ms,
            sent: sent_line(profile, exchange),
            got: got_line(profile, exchange),
        })
        .collect()
}

fn sent_line(profile: &Profile, exchange: &Exchange) -> String {
    let request = &exchange.request;
    let mut parts = vec![format!("{} {}", request.method, request.path)];
    if let Some(from) = request.from {
        parts.push(format!("(from {from})"));
    }
    for (name, value) in &request.headers {
        let fixed =
            name.eq_ignore_ascii_case("content-type") || profile.request.headers.contains_key(name);
        if name == IDEMPOTENCY_KEY {
            parts.push(format!("{name}: {}", clipped_key(value)));
        } else if !fixed {
            parts.push(format!("{name}: {}", clipped(value)));
        }
    }
    if !request
        .headers
        .iter()
        .any(|(name, _)| name == IDEMPOTENCY_KEY)
        && request.method != "GET"
    {
        parts.push(format!("(no {IDEMPOTENCY_KEY})"));
    }
    if !request.body.is_empty() {
        parts.push(clipped(&request.body));
    }
    parts.join("  ")
}

fn got_line(profile: &Profile, exchange: &Exchange) -> String {
    let answer = match &exchange.outcome {
        Ending::Answered(answer) => answer,
        Ending::Left => return "(the kit closed the connection without reading)".to_owned(),
        Ending::Failed(why) => return format!("(no answer: {why})"),
    };
    let mut parts = vec![answer.status.to_string()];
    if let Some(header) = &profile.replay.header
        && let Some(value) = answer.header(header)
    {
        parts.push(format!("{header}: {}", clipped(value)));
    }
    for name in &profile.replay.kept_headers {
        if let Some(value) = answer.header(name) {
            parts.push(format!("{name}: {}", clipped(value)));
        }
    }
    parts.push(clipped(answer.body.trim_end()));
    parts.join("  ")
}

/// `text` on one line, shortened past [`SHOWN_CHARS`] with its length.
fn clipped(text: &str) -> String {
    let one_line = text.replace(['\r', '\n'], " ");
    let count = one_line.chars().count();
    if count <= SHOWN_CHARS {
        return one_line;
    }
    let head: String = one_line.chars().take(SHOWN_CHARS - 12).collect();
    format!("{head}… ({count} characters)")
}

/// A key header's value, shortened as [`clipped`] shortens text but counted as the checks
/// count a key: the draft's quotes aside.
fn clipped_key(value: &str) -> String {
    let count = value.chars().count();
    if count <= SHOWN_CHARS {
        return value.to_owned();
    }
    let quoted = count >= 2 && value.starts_with('"') && value.ends_with('"');
    let key = if quoted { count - 2 } else { count };
    let head: String = value.chars().take(SHOWN_CHARS - 12).collect();
    format!("{head}… (a key of {key} characters)")
}
