//! One key used again: by a retry, by a changed request, by another caller, after its expiry.

use std::time::Duration;

use tokio::time::Instant;

use super::assert::{answered as answered_to, effects_grew, not_run, ran, refused, replay_of};
use crate::session::{Breach, Ending, Operation, Session};

/// A first request with a fresh key runs, once.
pub async fn first_request_succeeds(session: &Session<'_>, _: usize) -> Result<(), Breach> {
    let before = session.effects().await?;
    let op = session.operation();
    let first = session.send(&op, 1, &[]).await;
    ran(session, &first, "the first request")?;
    effects_grew(session, before, 1, &[first.number]).await
}

/// The same key with the same request gets the first answer again, marked as a replay.
pub async fn retry_replays_the_first_answer(session: &Session<'_>, _: usize) -> Result<(), Breach> {
    let before = session.effects().await?;
    let op = session.operation();
    let first = session.send(&op, 1, &[]).await;
    ran(session, &first, "the first request")?;
    let retry = session.send(&op, 2, &[]).await;
    replay_of(session, &retry, &first, "the retry")?;
    effects_grew(session, before, 1, &[first.number, retry.number]).await
}

/// A replay carries the headers of the first answer that the profile names, each unchanged.
pub async fn replay_keeps_the_stored_headers(
    session: &Session<'_>,
    _: usize,
) -> Result<(), Breach> {
    let kept = &session.profile().replay.kept_headers;
    let before = session.effects().await?;
    let op = session.operation();
    let first = session.send(&op, 1, &[]).await;
    let original = ran(session, &first, "the first request")?;
    if let Some(missing) = kept.iter().find(|name| original.header(name).is_none()) {
        return Err(Breach::new(
            format!("the first answer has no {missing}, which replay.kept_headers names"),
            &[first.number],
        ));
    }
    let retry = session.send(&op, 2, &[]).await;
    let answer = answered_to(&retry)?;
    let shown = |value: Option<&str>| value.map_or("(none)".to_owned(), |v| format!("{v:?}"));
    let differences: Vec<String> = (kept.iter())
        .filter(|name| answer.header(name) != original.header(name))
        .map(|name| {
            let (now, then) = (answer.header(name), original.header(name));
            format!("{name} {} for {}", shown(now), shown(then))
        })
        .collect();
    if !differences.is_empty() {
        return Err(Breach::new(
            format!(
                "the replay did not keep the first answer's headers: {}",
                differences.join(", ")
            ),
            &[first.number, retry.number],
        ));
    }
    effects_grew(session, before, 1, &[first.number, retry.number]).await
}

/// Headers a client may send that name a middleware's own decision (a replay marker, a cache
/// hit) decide nothing: a first request that carries them runs, and its retry replays it.
pub async fn client_header_cannot_decide(session: &Session<'_>, _: usize) -> Result<(), Breach> {
    let replay = &session.profile().replay;
    let mut claims: Vec<(String, String)> = CLIENT_CLAIMS
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect();
    if let Some(header) = &replay.header {
        let value = replay.value.clone().unwrap_or_else(|| "true".to_owned());
        claims.push((header.clone(), value));
    }
    let before = session.effects().await?;
    let op = session.operation();
    let first = session.send(&op, 1, &claims).await;
    if let Ending::Failed(why) = &first.outcome {
        return Err(Breach::new(
            format!(
                "a first request that claims to be a replay got no answer ({why}): a header \
                 the client set decided what the middleware did"
            ),
            &[first.number],
        ));
    }
    ran(
        session,
        &first,
        "a first request that claims to be a replay",
    )?;
    let retry = session.send(&op, 2, &claims).await;
    replay_of(session, &retry, &first, "its retry")?;
    effects_grew(session, before, 1, &[first.number, retry.number]).await
}

/// Request headers that some middleware sets for itself: a client must not be able to set them.
const CLIENT_CLAIMS: [(&str, &str); 3] = [
    ("X-Hit", "true"),
    ("X-Cache", "HIT"),
    ("X-Idempotency-Replayed", "true"),
];

/// An answer that sets a cookie is still the key's answer: its retry replays it (a replay
/// may leave the cookie out), and the operation runs once.
pub async fn cookie_answer_is_kept(session: &Session<'_>, _: usize) -> Result<(), Breach> {
    let header = (session.profile().cookie.as_ref()).map_or(String::new(), |c| c.header.clone());
    let cookie = [(header, "1".to_owned())];
    let before = session.effects().await?;
    let op = session.operation();
    let first = session.send(&op, 1, &cookie).await;
    ran(session, &first, "a request whose answer sets a cookie")?;
    let retry = session.send(&op, 2, &cookie).await;
    replay_of(
        session,
        &retry,
        &first,
        "the retry of an answer that set a cookie",
    )?;
    effects_grew(session, before, 1, &[first.number, retry.number]).await
}

/// The same key with another body gets 422, and changes nothing: a retry still replays.
pub async fn changed_body_is_422(session: &Session<'_>, _: usize) -> Result<(), Breach> {
    let op = session.operation();
    let changed = session.changed_body(&op);
    reused_is_refused(session, &op, &changed, "the changed body", 422).await
}

/// The same key on another path is refused (422, or the profile's status for a path with no
/// route), and changes nothing: nothing runs, nothing is replayed, a retry still replays.
pub async fn changed_path_is_refused(session: &Session<'_>, _: usize) -> Result<(), Breach> {
    let shape = &session.profile().request;
    let path = shape.changed_path.clone().unwrap_or_default();
    let op = session.operation();
    let changed = session.changed_path(&op, &path);
    let what = "the request on another path";
    reused_is_refused(session, &op, &changed, what, shape.changed_path_status).await
}

async fn reused_is_refused(
    session: &Session<'_>,
    op: &Operation,
    changed: &Operation,
    what: &str,
    status: u16,
) -> Result<(), Breach> {
    let before = session.effects().await?;
    let first = session.send(op, 1, &[]).await;
    ran(session, &first, "the first request")?;
    let reused = session.send(changed, 1, &[]).await;
    let what = format!("{what} under a used key");
    if status == 422 {
        refused(session, &reused, 422, &what)
    } else {
        not_run(session, &reused, status, &what)
    }
    .map_err(|breach| breach.after(first.number))?;
    let retry = session.send(op, 2, &[]).await;
    replay_of(session, &retry, &first, "the retry after the 422")?;
    effects_grew(
        session,
        before,
        1,
        &[first.number, reused.number, retry.number],
    )
    .await
}

/// Two callers with one key are two operations: each runs, and each retry replays its own.
pub async fn callers_are_kept_apart(session: &Session<'_>, _: usize) -> Result<(), Breach> {
    let before = session.effects().await?;
    let first = session.operation();
    let alice = Operation {
        caller: 1,
        ..first.clone()
    };
    let bob = Operation {
        caller: 2,
        id: session.operation().id,
        ..first
    };
    let alice_first = session.send(&alice, 1, &[]).await;
    ran(session, &alice_first, "the first caller's request")?;
    let bob_first = session.send(&bob, 1, &[]).await;
    ran(
        session,
        &bob_first,
        "the second caller's request under the same key",
    )
    .map_err(|breach| breach.after(alice_first.number))?;
    let alice_retry = session.send(&alice, 2, &[]).await;
    replay_of(
        session,
        &alice_retry,
        &alice_first,
        "the first caller's retry",
    )?;
    let bob_retry = session.send(&bob, 2, &[]).await;
    replay_of(session, &bob_retry, &bob_first, "the second caller's retry")?;
    let shown = [alice_first.number, bob_first.number];
    effects_grew(session, before, 2, &shown).await
}

/// A key replays while its expiry has not passed, and is a new key after it.
pub async fn key_expires_when_declared(session: &Session<'_>, _: usize) -> Result<(), Breach> {
    let (after_ms, grace_ms) = session
        .profile()
        .expiry
        .as_ref()
        .map_or((0, 0), |e| (e.after_ms, e.grace_ms));
    let before = session.effects().await?;
    let op = session.operation();
    let first = session.send(&op, 1, &[]).await;
    ran(session, &first, "the first request")?;
    let answered = Instant::now();
    // Three quarters into the expiry, the record must still be there ...
    tokio::time::sleep_until(answered + Duration::from_millis(after_ms * 3 / 4)).await;
    let inside = session.send(&op, 2, &[]).await;
    replay_of(session, &inside, &first, "a retry before the expiry")?;
    // ... and past it, with the grace a store that sweeps late is given, it must be gone.
    tokio::time::sleep_until(answered + Duration::from_millis(after_ms + grace_ms)).await;
    let past = session.send(&op, 3, &[]).await;
    let answer = answered_to(&past)?;
    if session.is_replay(answer) {
        return Err(Breach::new(
            format!(
                "the key was replayed {} ms after its first answer, past the declared expiry \
                 ({after_ms} ms) and its grace ({grace_ms} ms)",
                past.at_ms.saturating_sub(first.at_ms)
            ),
            &[first.number, past.number],
        ));
    }
    ran(session, &past, "the key used again after its expiry")
        .map_err(|breach| breach.after(first.number))?;
    effects_grew(session, before, 2, &[first.number, past.number]).await
}
