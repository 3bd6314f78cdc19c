//! Many keys at once: a burst that fills the server, operations sent three times each.

use super::assert::{all, answered, effects_grew, replay_of};
use crate::session::{Breach, Operation, Sent, Session};

/// A burst of `size` fresh keys: each is accepted or refused with the declared status, never
/// anything else; then every accepted key replays its answer, so none was evicted while live.
pub async fn burst_keeps_live_records(session: &Session<'_>, size: usize) -> Result<(), Breach> {
    let before = session.effects().await?;
    let ops: Vec<Operation> = (0..size).map(|_| session.operation()).collect();
    let firsts = in_waves(session, &ops, 1).await;
    let accepted = accepted(session, &ops, &firsts, size)?;
    let charged = accepted.len() as u64;
    let live = still_live(session, accepted, size)?;
    let retried: Vec<Operation> = live.iter().map(|(op, _)| op.clone()).collect();
    let retries = in_waves(session, &retried, 2).await;
    for ((_, first), retry) in live.iter().zip(&retries) {
        let what = format!("the retry of an accepted key, after a burst of {size}");
        replay_of(session, retry, first, &what)?;
    }
    effects_grew(session, before, charged, &[]).await
}

/// The burst's keys that were accepted: at least one, and every other one refused as declared.
fn accepted(
    session: &Session<'_>,
    ops: &[Operation],
    firsts: &[Sent],
    size: usize,
) -> Result<Vec<(Operation, Sent)>, Breach> {
    let refusal = session
        .profile()
        .burst
        .as_ref()
        .and_then(|b| b.refusal_status);
    let mut accepted = Vec::new();
    for (op, first) in ops.iter().zip(firsts) {
        match answered(first)?.status {
            200..=299 => accepted.push((op.clone(), first.clone())),
            status if Some(status) == refusal => {}
            status => {
                let expected =
                    refusal.map_or("a success".to_owned(), |r| format!("a success or {r}"));
                return Err(Breach::new(
                    format!("a fresh key in a burst of {size} got {status}, not {expected}"),
                    &[first.number],
                ));
            }
        }
    }
    if accepted.is_empty() {
        let shown: Vec<usize> = firsts.iter().take(3).map(|first| first.number).collect();
        return Err(Breach::new(
            format!(
                "every key of a burst of {size} was refused: nothing shows that a record is kept"
            ),
            &shown,
        ));
    }
    Ok(accepted)
}

/// The accepted keys whose record must still live: one that may have expired by now proves
/// nothing either way.
fn still_live(
    session: &Session<'_>,
    mut accepted: Vec<(Operation, Sent)>,
    size: usize,
) -> Result<Vec<(Operation, Sent)>, Breach> {
    let expiry = session
        .profile()
        .expiry
        .as_ref()
        .map(|e| e.after_ms * 3 / 4);
    let now = session.elapsed_ms();
    accepted.retain(|(_, first)| expiry.is_none_or(|ms| now < first.at_ms + ms));
    if accepted.is_empty() {
        return Err(Breach::new(
            format!(
                "a burst of {size} took longer than three quarters of the declared expiry: no \
                 accepted key could be retried while its record must live (a smaller [burst] \
                 keys, or a larger scale.parallel)"
            ),
            &[],
        ));
    }
    Ok(accepted)
}

/// Sends attempt `attempt` of every operation, `scale.parallel` at a time, in order.
async fn in_waves(session: &Session<'_>, ops: &[Operation], attempt: u32) -> Vec<Sent> {
    let mut sent = Vec::with_capacity(ops.len());
    for wave in ops.chunks(session.profile().scale.parallel) {
        sent.extend(
            all(wave
                .iter()
                .map(|op| session.send(op, attempt, &[]))
                .collect())
            .await,
        );
    }
    sent
}

/// `size` operations, each sent twice at once and then once more: exactly `size` effects.
/// Each pair is a try at the race between a lookup and a reservation, which no handler hook
/// widens (a handler that stores its answer only when done is the duplicate check's).
pub async fn effects_match_operations(session: &Session<'_>, size: usize) -> Result<(), Breach> {
    let before = session.effects().await?;
    let ops: Vec<Operation> = (0..size).map(|_| session.operation()).collect();
    let pairs = all(ops
        .iter()
        .map(|op| async move {
            let (a, b) = tokio::join!(session.send(op, 1, &[]), session.send(op, 2, &[]));
            let c = session.send(op, 3, &[]).await;
            [a, b, c]
        })
        .collect())
    .await;
    let shown: Vec<usize> = pairs.iter().flatten().map(|sent| sent.number).collect();
    // The count first: a second charge is the finding, whatever the copies were told.
    effects_grew(session, before, size as u64, &shown).await?;
    for [a, b, c] in &pairs {
        // Of two copies sent at once, one may be told 409; the third comes after both ended.
        for (sent, allowed) in [(a, 409), (b, 409), (c, 0)] {
            let status = answered(sent)?.status;
            if !(200..300).contains(&status) && status != allowed {
                return Err(Breach::new(
                    format!("an operation's copy got {status}, not a success"),
                    &[a.number, b.number, c.number],
                ));
            }
        }
    }
    Ok(())
}
