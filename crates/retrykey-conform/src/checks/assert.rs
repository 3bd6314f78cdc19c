//! What the checks expect of an answer, each refusal a [`Breach`] naming its exchanges.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::session::{Breach, Ending, Sent, Session};
use crate::wire::WireAnswer;

/// The answer of `sent`, or a breach saying there was none.
pub fn answered(sent: &Sent) -> Result<&WireAnswer, Breach> {
    match &sent.outcome {
        Ending::Answered(answer) => Ok(answer),
        Ending::Left => Err(Breach::new(
            "the kit left this exchange unread",
            &[sent.number],
        )),
        Ending::Failed(why) => Err(Breach::new(
            format!("exchange {} got no answer: {why}", sent.number),
            &[sent.number],
        )),
    }
}

/// A success (2xx) that is not marked as a replay: the request ran.
pub fn ran<'s>(
    session: &Session<'_>,
    sent: &'s Sent,
    what: &str,
) -> Result<&'s WireAnswer, Breach> {
    let answer = answered(sent)?;
    if !(200..300).contains(&answer.status) {
        return Err(Breach::new(
            format!("{what} got {}, not a success", answer.status),
            &[sent.number],
        ));
    }
    if session.is_replay(answer) {
        return Err(Breach::new(
            format!("{what} was marked as a replay, though nothing ran under its key before"),
            &[sent.number],
        ));
    }
    Ok(answer)
}

/// `sent` is a replay of `first`: the same status and body, and the marker. (Its headers are
/// one check's own: `replay-keeps-the-stored-headers`.)
pub fn replay_of(
    session: &Session<'_>,
    sent: &Sent,
    first: &Sent,
    what: &str,
) -> Result<(), Breach> {
    let (answer, original) = (answered(sent)?, answered(first)?);
    let mut differences = Vec::new();
    if answer.status != original.status {
        differences.push(format!("status {} for {}", answer.status, original.status));
    }
    let profile = session.profile();
    if profile.comparable(&answer.body) != profile.comparable(&original.body) {
        differences.push("another body".to_owned());
    }
    if let Some(header) = &profile.replay.header
        && !session.is_replay(answer)
    {
        let value = profile.replay.value.as_deref().unwrap_or("(any value)");
        differences.push(format!("no {header}: {value}"));
    }
    if differences.is_empty() {
        return Ok(());
    }
    Err(Breach::new(
        format!(
            "{what} is not a replay of the first answer: {}",
            differences.join(", ")
        ),
        &[first.number, sent.number],
    ))
}

/// `sent` got `status`, with a body that says why (of the profile's error type, where it names one).
pub fn refused(session: &Session<'_>, sent: &Sent, status: u16, what: &str) -> Result<(), Breach> {
    let answer = answered(sent)?;
    if answer.status != status {
        return Err(Breach::new(
            format!("{what} got {}, not {status}", answer.status),
            &[sent.number],
        ));
    }
    let media = session.profile().errors.media_type.as_deref();
    let content_type = answer.header("content-type").unwrap_or("");
    match media {
        Some(media) if !content_type.starts_with(media) => Err(Breach::new(
            format!("{what} got {status} as {content_type:?}, not {media}"),
            &[sent.number],
        )),
        _ if answer.body.trim().is_empty() => Err(Breach::new(
            format!("{what} got {status} with an empty body, which says nothing of why"),
            &[sent.number],
        )),
        _ => Ok(()),
    }
}

/// `sent` got `status` and is no replay: a refusal that is not the layer's (a router's 404)
/// need not look like the layer's own.
pub fn not_run(session: &Session<'_>, sent: &Sent, status: u16, what: &str) -> Result<(), Breach> {
    let answer = answered(sent)?;
    if answer.status != status {
        return Err(Breach::new(
            format!("{what} got {}, not {status}", answer.status),
            &[sent.number],
        ));
    }
    if session.is_replay(answer) {
        return Err(Breach::new(
            format!("{what} got {status} marked as a replay"),
            &[sent.number],
        ));
    }
    Ok(())
}

/// The effect count grew by exactly `expected` since `before`.
pub async fn effects_grew(
    session: &Session<'_>,
    before: Option<(u64, usize)>,
    expected: u64,
    shown: &[usize],
) -> Result<(), Breach> {
    let Some((before, read_before)) = before else {
        return Ok(());
    };
    let Some((after, read_after)) = session.effects().await? else {
        return Ok(());
    };
    let made = after.saturating_sub(before);
    if made == expected {
        return Ok(());
    }
    // Both counts first: a witness cut at its limit keeps the proof, and drops requests.
    let mut exchanges = vec![read_before, read_after];
    exchanges.extend_from_slice(shown);
    Err(Breach::new(
        format!("{made} effect(s) for {expected} operation(s)"),
        &exchanges,
    ))
}

/// Runs every future at once on this task and returns their outputs in order: requests that
/// must be in flight together, without a task (and a `'static` borrow) each.
pub async fn all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut pending: Vec<Option<Pin<Box<F>>>> =
        futures.into_iter().map(|f| Some(Box::pin(f))).collect();
    let mut outputs: Vec<Option<F::Output>> = pending.iter().map(|_| None).collect();
    std::future::poll_fn(|cx: &mut Context<'_>| {
        for (slot, output) in pending.iter_mut().zip(outputs.iter_mut()) {
            if let Some(future) = slot
                && let Poll::Ready(value) = future.as_mut().poll(cx)
            {
                *output = Some(value);
                *slot = None;
            }
        }
        if pending.iter().all(Option::is_none) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    outputs
        .into_iter()
        .map(|o| o.expect("every future finished"))
        .collect()
}
