//! The key header itself: missing, empty, malformed, too long, or sent twice. Each refusal
//! gets the profile's refusal status and runs nothing.

use super::assert::{answered, effects_grew, ran, refused};
use crate::session::{Breach, IDEMPOTENCY_KEY, Session};
use crate::wire::WireRequest;

/// The status the profile gives a refused key.
fn refusal(session: &Session<'_>) -> u16 {
    session.profile().key.refusal_status
}

/// A request without a key, on a route that requires one, is refused and runs nothing.
pub async fn missing_key_is_refused(session: &Session<'_>, _: usize) -> Result<(), Breach> {
    let before = session.effects().await?;
    let op = session.operation();
    let request = session.keyless(op.n, &op.path, 0);
    let sent = session.exchange(request, None).await;
    refused(session, &sent, refusal(session), "a request without a key")?;
    effects_grew(session, before, 0, &[sent.number]).await
}

/// An empty key is no key: two requests that carry one are never taken for the same
/// operation. Each is refused, or (on a route where the key is optional) runs as keyless.
pub async fn empty_key_is_no_key(session: &Session<'_>, _: usize) -> Result<(), Breach> {
    let before = session.effects().await?;
    let mut values = vec![String::new()];
    if !session.profile().key.opaque {
        values.push("\"\"".to_owned()); // the draft's empty string
    }
    let mut shown = Vec::new();
    let mut runs = 0;
    for value in &values {
        for _ in 0..2 {
            let sent = session
                .exchange(with_key_lines(session, &[value]), None)
                .await;
            shown.push(sent.number);
            let what = match value.as_str() {
                "" => "a request with an empty key header".to_owned(),
                quoted => format!("a request whose key is {quoted}, the draft's empty string"),
            };
            let status = answered(&sent)?.status;
            if session.profile().key.required || status == refusal(session) {
                refused(session, &sent, refusal(session), &what)
                    .map_err(|breach| breach.with_earlier(&shown))?;
            } else {
                ran(session, &sent, &what).map_err(|breach| breach.with_earlier(&shown))?;
                runs += 1;
            }
        }
    }
    effects_grew(session, before, runs, &shown).await
}

/// A request without a key is no one's operation: two callers' identical keyless requests
/// each run (or each are refused, on a route that requires a key), and neither is answered
/// with the other's.
pub async fn keyless_callers_never_share_an_answer(
    session: &Session<'_>,
    _: usize,
) -> Result<(), Breach> {
    let before = session.effects().await?;
    let op = session.operation();
    let mut shown = Vec::new();
    let mut runs = 0;
    for caller in [1, 2] {
        let sent = session
            .exchange(session.keyless(op.n, &op.path, caller), None)
            .await;
        shown.push(sent.number);
        let what = format!("caller {caller}'s request without a key");
        if answered(&sent)?.status == refusal(session) {
            refused(session, &sent, refusal(session), &what)?;
        } else {
            ran(session, &sent, &what).map_err(|breach| breach.with_earlier(&shown))?;
            runs += 1;
        }
    }
    effects_grew(session, before, runs, &shown).await
}

/// Values that are neither the draft's string nor (where the profile allows them) a token.
fn malformed_values(bare_tokens: bool, key: &str) -> Vec<String> {
    let mut values = vec![
        format!("\"{key}"),              // a string never closed
        format!("{key} {key}"),          // two words
        format!("\"{key}\", \"{key}\""), // a list of two strings
        format!("\"{key}\\q\""),         // an escape the draft's strings do not have
    ];
    if !bare_tokens {
        values.push(key.to_owned()); // a token, where only strings are keys
    }
    values
}

/// Each malformed key value is refused and runs nothing.
pub async fn malformed_key_is_refused(session: &Session<'_>, _: usize) -> Result<(), Breach> {
    let before = session.effects().await?;
    let op = session.operation();
    let mut shown = Vec::new();
    for value in malformed_values(session.profile().key.bare_tokens, &op.key) {
        let sent = session
            .exchange(with_key_lines(session, &[&value]), None)
            .await;
        shown.push(sent.number);
        refused(
            session,
            &sent,
            refusal(session),
            &format!("the key {value:?}"),
        )?;
    }
    effects_grew(session, before, 0, &shown).await
}

/// A key of the longest declared length runs; one character more is refused.
pub async fn overlong_key_is_refused(session: &Session<'_>, _: usize) -> Result<(), Breach> {
    let max = session.profile().key.max_length.unwrap_or(0);
    let before = session.effects().await?;
    let op = session.operation();
    let longest: String = op
        .key
        .chars()
        .chain(std::iter::repeat('x'))
        .take(max)
        .collect();
    let at_limit = session
        .exchange(
            with_key_lines(session, &[&session.key_value(&longest)]),
            None,
        )
        .await;
    ran(session, &at_limit, &format!("a key of {max} characters"))?;
    let over = session.key_value(&format!("{longest}y"));
    let sent = session
        .exchange(with_key_lines(session, &[&over]), None)
        .await;
    refused(
        session,
        &sent,
        refusal(session),
        &format!("a key of {} characters", max + 1),
    )
    .map_err(|breach| breach.after(at_limit.number))?;
    effects_grew(session, before, 1, &[at_limit.number, sent.number]).await
}

/// The key on two header lines is refused, whether the two agree or not, and runs nothing.
pub async fn repeated_key_header_is_refused(session: &Session<'_>, _: usize) -> Result<(), Breach> {
    let before = session.effects().await?;
    let op = session.operation();
    let other = session.operation();
    let same = session.key_value(&op.key);
    let different = session.key_value(&other.key);
    let mut shown = Vec::new();
    for lines in [[&same, &same], [&same, &different]] {
        let request = with_key_lines(session, &[lines[0], lines[1]]);
        let sent = session.exchange(request, None).await;
        shown.push(sent.number);
        refused(
            session,
            &sent,
            refusal(session),
            "a key on two header lines",
        )?;
    }
    effects_grew(session, before, 0, &shown).await
}

/// A fresh operation's request, its key header replaced by `lines`, written raw.
fn with_key_lines(session: &Session<'_>, lines: &[&str]) -> WireRequest {
    let op = session.operation();
    let mut request = session.request(&op, &[]);
    request.headers.retain(|(name, _)| name != IDEMPOTENCY_KEY);
    for line in lines {
        request
            .headers
            .push((IDEMPOTENCY_KEY.to_owned(), (*line).to_owned()));
    }
    request
}
