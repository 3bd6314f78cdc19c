//! A first attempt while it runs: duplicates that arrive meanwhile, a 5xx it ends in, a client
//! that leaves it.

use std::time::Duration;

use super::assert::{all, effects_grew, ran, refused, replay_of};
use crate::profile::{DuplicatePolicy, ErrorPolicy};
use crate::session::{Breach, Operation, Session};

/// The profile's slow-request header, and how long such a request runs.
fn slow(session: &Session<'_>) -> (Vec<(String, String)>, u64) {
    let duplicates = session.profile().in_flight.as_ref();
    let header = duplicates.map(|d| (d.slow_header.name.clone(), d.slow_header.value.clone()));
    (
        header.into_iter().collect(),
        duplicates.map_or(0, |d| d.slow_ms),
    )
}

/// `size` duplicates sent while the first attempt runs each wait for it and replay its answer,
/// or each get 409, as the profile declares; the operation runs once.
pub async fn duplicate_waits_or_conflicts(
    session: &Session<'_>,
    size: usize,
) -> Result<(), Breach> {
    let policy = session.profile().in_flight.as_ref().map(|d| d.policy);
    let (slow_header, slow_ms) = slow(session);
    let before = session.effects().await?;
    let op = session.operation();
    let later = async {
        // A quarter of the first attempt's run: it has begun, and is far from done.
        tokio::time::sleep(Duration::from_millis(slow_ms / 4)).await;
        all((0..size)
            .map(|n| session.send(&op, n as u32 + 2, &[]))
            .collect())
        .await
    };
    let (first, duplicates) = tokio::join!(session.send(&op, 1, &slow_header), later);
    ran(session, &first, "the first attempt")?;
    for duplicate in &duplicates {
        match policy {
            Some(DuplicatePolicy::Conflict) => refused(
                session,
                duplicate,
                409,
                "a duplicate sent while the first attempt ran (the profile's policy: conflict)",
            )
            .map_err(|breach| breach.after(first.number))?,
            _ => replay_of(
                session,
                duplicate,
                &first,
                "a duplicate sent while the first attempt ran (the profile's policy: wait)",
            )?,
        }
    }
    let mut shown = vec![first.number];
    shown.extend(duplicates.iter().map(|d| d.number));
    effects_grew(session, before, 1, &shown).await
}

/// A first attempt that ends in a 5xx releases its key (the retry runs, once) or keeps the
/// 5xx as its answer (the retry replays it, and nothing runs), as the profile declares.
pub async fn server_error_releases_or_replays(
    session: &Session<'_>,
    _: usize,
) -> Result<(), Breach> {
    let fail_once = session.profile().fail_once.as_ref();
    let header = fail_once.map(|f| f.header.clone()).unwrap_or_default();
    let policy = fail_once.map(|f| f.policy).unwrap_or_default();
    let before = session.effects().await?;
    let op = session.operation();
    let fail = [(header, format!("fail-{}", op.key))];
    let first = session.send(&op, 1, &fail).await;
    let status = super::assert::answered(&first)?.status;
    if !(500..600).contains(&status) {
        return Err(Breach::new(
            format!(
                "the request asked to fail got {status}, not a 5xx: the profile's [fail_once] header did not work"
            ),
            &[first.number],
        ));
    }
    let retry = session.send(&op, 2, &fail).await;
    let (what, effects) = ("the retry after a 5xx", &[first.number, retry.number]);
    match policy {
        ErrorPolicy::Release => {
            ran(session, &retry, what).map_err(|breach| breach.after(first.number))?;
            effects_grew(session, before, 1, effects).await
        }
        ErrorPolicy::Replay => {
            let what = "the retry after a 5xx (the profile's policy: replay)";
            replay_of(session, &retry, &first, what)?;
            effects_grew(session, before, 0, effects).await
        }
    }
}

/// A first attempt whose client left still runs to its end; the retry replays its answer.
pub async fn disconnected_first_attempt_completes(
    session: &Session<'_>,
    _: usize,
) -> Result<(), Breach> {
    let (slow_header, slow_ms) = slow(session);
    let before = session.effects().await?;
    let op = session.operation();
    let linger = Duration::from_millis(slow_ms / 4);
    let left = session.send_and_leave(&op, &slow_header, linger).await;
    if let crate::session::Ending::Failed(why) = &left.outcome {
        return Err(Breach::new(
            format!("the first attempt could not be sent: {why}"),
            &[left.number],
        ));
    }
    // Past the attempt's shortest run, with room for the answer to be recorded; a 409 means it
    // still runs (the profile's slow_ms is a floor), so the retry comes again until the limit.
    tokio::time::sleep(Duration::from_millis(slow_ms + slow_ms / 2 + 100)).await;
    let retry = retried_past_409(session, &op, &[]).await;
    let answer = super::assert::answered(&retry).map_err(|breach| breach.after(left.number))?;
    let marked = session.profile().replay.header.is_none() || session.is_replay(answer);
    if !(200..300).contains(&answer.status) || !marked {
        return Err(Breach::new(
            format!(
                "the retry after the client left got {}{}: the first attempt did not complete and keep its answer",
                answer.status,
                if session.is_replay(answer) {
                    " (replayed)"
                } else {
                    ", not a replay"
                }
            ),
            &[left.number, retry.number],
        ));
    }
    effects_grew(session, before, 1, &[left.number, retry.number]).await
}

/// Two copies sent together just after the key's lifetime run once between them: the expired
/// record gives way to one new attempt, and the other copy waits for it or gets 409.
pub async fn expired_key_runs_once_more(session: &Session<'_>, _: usize) -> Result<(), Breach> {
    let (after_ms, grace_ms) =
        (session.profile().expiry.as_ref()).map_or((0, 0), |e| (e.after_ms, e.grace_ms));
    let (slow_header, _) = slow(session);
    let before = session.effects().await?;
    let op = session.operation();
    let first = session.send(&op, 1, &[]).await;
    ran(session, &first, "the first request")?;
    let answered = tokio::time::Instant::now();
    tokio::time::sleep_until(answered + Duration::from_millis(after_ms + grace_ms)).await;
    let renewed = Operation {
        id: session.operation().id,
        life: 1,
        ..op.clone()
    };
    let (a, b) = tokio::join!(
        session.send(&renewed, 1, &slow_header),
        session.send(&renewed, 2, &slow_header)
    );
    let shown = [first.number, a.number, b.number];
    let mut fresh = 0;
    for copy in [&a, &b] {
        let answer = super::assert::answered(copy).map_err(|breach| breach.with_earlier(&shown))?;
        let status = answer.status;
        if (200..300).contains(&status) && !session.is_replay(answer) {
            fresh += 1;
        } else if !(200..300).contains(&status) && status != 409 {
            return Err(Breach::new(
                format!("a copy sent after the key's lifetime got {status}, not a success or 409"),
                &shown,
            ));
        }
    }
    if fresh > 1 && session.profile().replay.header.is_some() {
        return Err(Breach::new(
            "both copies sent together after the key's lifetime ran: the expired record gave way to two attempts",
            &shown,
        ));
    }
    effects_grew(session, before, 2, &shown).await
}

/// A handler that panics (or throws) leaves no key behind it: the retry is answered, not
/// held or refused for the life of the process; it runs, or replays the failure where the
/// profile keeps a 5xx.
pub async fn throwing_handler_leaves_no_stuck_key(
    session: &Session<'_>,
    _: usize,
) -> Result<(), Breach> {
    let profile = session.profile();
    let header = (profile.throws.as_ref()).map_or(String::new(), |t| t.header.clone());
    let policy = profile
        .fail_once
        .as_ref()
        .map(|f| f.policy)
        .unwrap_or_default();
    let before = session.effects().await?;
    let op = session.operation();
    let throw = [(header, format!("throw-{}", op.key))];
    let first = session.send(&op, 1, &throw).await;
    if let Some(status) = first.status().filter(|status| (200..300).contains(status)) {
        return Err(Breach::new(
            format!(
                "the request asked to throw got {status}: the profile's [throws] header did not work"
            ),
            &[first.number],
        ));
    }
    let limit = Duration::from_millis(profile.scale.timeout_ms);
    let retry = retried_past_409(session, &op, &throw).await;
    let shown = [first.number, retry.number];
    let stuck = |why: String| {
        Breach::new(
            format!("the key is stuck after its handler threw: {why}"),
            &shown,
        )
    };
    let answer = match super::assert::answered(&retry) {
        Ok(answer) => answer,
        Err(breach) => return Err(stuck(breach.what)),
    };
    if answer.status == 409 {
        return Err(stuck(format!(
            "every retry for {} ms got 409",
            limit.as_millis()
        )));
    }
    match policy {
        ErrorPolicy::Release => {
            ran(session, &retry, "the retry after the handler threw")
                .map_err(|breach| breach.after(first.number))?;
            effects_grew(session, before, 1, &shown).await
        }
        ErrorPolicy::Replay => effects_grew(session, before, 0, &shown).await,
    }
}

/// Retries of `op` from attempt 2, every 100 ms while they get 409 (its first attempt still
/// runs, as far as the server says), within the profile's timeout: the last one sent.
async fn retried_past_409(
    session: &Session<'_>,
    op: &Operation,
    extra: &[(String, String)],
) -> crate::session::Sent {
    let limit = Duration::from_millis(session.profile().scale.timeout_ms);
    let started = tokio::time::Instant::now();
    let mut attempt = 2;
    loop {
        let retry = session.send(op, attempt, extra).await;
        if retry.status() != Some(409) || started.elapsed() >= limit {
            return retry;
        }
        attempt += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
