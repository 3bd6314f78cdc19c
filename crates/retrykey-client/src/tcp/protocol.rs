//! The line protocol: one request line, one reply line, fields separated by a tab.
//!
//! A tab separates fields because neither a key nor a job name may contain one (both reject
//! control characters), so no escaping is needed. Every line ends with `\n` and is at most
//! [`MAX_LINE`] bytes.
//!
//! | line (`⇥` is a tab) | meaning |
//! |---|---|
//! | `APPLY⇥<key>⇥<job>⇥<units>` | request: apply `units` of `job` under `key` |
//! | `OK⇥<operation>⇥<total>⇥<replayed 0/1>` | the receipt (new, or replayed from the record) |
//! | `CONFLICT⇥<message>` | the key was first used with a different request (read as 409) |
//! | `INVALID⇥<message>` | bad key or request, capacity or ceiling: nothing applied (422) |
//! | `BUSY⇥<seconds>` | not now, come back after that many seconds; nothing applied (503 + Retry-After) |
//! | `UNAVAILABLE⇥<message>` | the ledger failed; the outcome is unknown (503) |

use std::time::Duration;

use retrykey::{Error, Key, Receipt, Request};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};

use crate::{Failure, StatusFailure, Success, TransportError};

/// The longest line either side accepts, newline included.
pub const MAX_LINE: usize = 1024;

/// The request line for `key` and `request`, newline included.
pub fn request_line(key: &Key, request: &Request) -> String {
    format!("APPLY\t{key}\t{}\t{}\n", request.job(), request.units())
}

/// Parses a request line (without its newline) into a key and a validated request.
pub fn parse_request(line: &str) -> Result<(Key, Request), String> {
    let mut fields = line.split('\t');
    let (Some("APPLY"), Some(key), Some(job), Some(units), None) = (
        fields.next(),
        fields.next(),
        fields.next(),
        fields.next(),
        fields.next(),
    ) else {
        return Err("expected APPLY<tab>key<tab>job<tab>units".into());
    };
    let key = Key::new(key).map_err(|e| e.to_string())?;
    let request = Request::parse(job, units).map_err(|e| e.to_string())?;
    Ok((key, request))
}

/// The reply line for a ledger's result, newline included.
pub fn reply_line(result: &Result<Receipt, Error>) -> String {
    match result {
        Ok(r) => format!(
            "OK\t{}\t{}\t{}\n",
            r.operation,
            r.total,
            u8::from(r.replayed)
        ),
        Err(error @ Error::Conflict) => format!("CONFLICT\t{error}\n"),
        Err(error @ Error::Storage(_)) => format!("UNAVAILABLE\t{error}\n"),
        Err(error) => invalid_line(&error.to_string()),
    }
}

/// The reply line for a request line that could not be read as one, newline included.
pub fn invalid_line(problem: &str) -> String {
    format!("INVALID\t{problem}\n")
}

/// The reply line that asks the client to come back after `seconds`, newline included.
pub fn busy_line(seconds: u64) -> String {
    format!("BUSY\t{seconds}\n")
}

/// Reads a reply line (without its newline) as an attempt's result.
///
/// A line that cannot be read is [`Failure::Lost`] with [`TransportError::UnreadableReply`]: the
/// request was sent and its fate is unknown.
pub fn parse_reply(line: &str) -> Result<Success<Receipt>, Failure> {
    let fields: Vec<&str> = line.split('\t').collect();
    let unreadable = || {
        Failure::Lost(TransportError::UnreadableReply {
            line: line.to_owned(),
        })
    };
    match fields.as_slice() {
        ["OK", operation, total, replayed] => {
            let receipt = Receipt {
                operation: operation.parse().map_err(|_| unreadable())?,
                total: total.parse().map_err(|_| unreadable())?,
                replayed: match *replayed {
                    "0" => false,
                    "1" => true,
                    _ => return Err(unreadable()),
                },
            };
            Ok(Success {
                value: receipt,
                replayed: receipt.replayed,
            })
        }
        ["CONFLICT", message] => Err(Failure::Status(StatusFailure::new(409, *message))),
        ["INVALID", message] => Err(Failure::Status(StatusFailure::new(422, *message))),
        ["UNAVAILABLE", message] => Err(Failure::Status(StatusFailure::new(503, *message))),
        ["BUSY", seconds] => {
            let seconds: u64 = seconds.parse().map_err(|_| unreadable())?;
            Err(Failure::Status(
                StatusFailure::new(503, "busy").retry_after(Duration::from_secs(seconds)),
            ))
        }
        _ => Err(unreadable()),
    }
}

/// One line without its newline; `None` at end of stream, on error, or on an over-long line.
pub(crate) async fn read_line<R: AsyncRead + Unpin>(reader: &mut BufReader<R>) -> Option<String> {
    let mut line = String::new();
    let read = (&mut *reader)
        .take(MAX_LINE as u64)
        .read_line(&mut line)
        .await
        .ok()?;
    if read == 0 || !line.ends_with('\n') {
        return None;
    }
    line.pop();
    Some(line)
}
