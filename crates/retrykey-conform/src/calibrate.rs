//! Proof that a profile's hook works on this server before a check relies on it: a hook that
//! does nothing would let its checks pass without testing what they name, or fail them for a
//! cause that is the profile's, not the server's.

use std::time::Instant;

use crate::profile::Profile;
use crate::session::{Session, marked_replay};
use crate::wire::Base;

/// A hook of the profile that a check relies on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hook {
    /// `[in_flight] slow_header`: a request that carries it runs at least `slow_ms`.
    SlowRequest,
    /// `[fail_once] header`: the first request with a value of it gets a 5xx.
    FailOnce,
    /// `[callers]`: each caller's request is served, not refused.
    Callers,
    /// `[effects]`: the count grows by one when a fresh request runs.
    Effects,
    /// `[throws] header`: the first request with a value of it gets no success.
    Throws,
    /// `[cookie] header`: a request with it gets an answer that sets a cookie.
    SetsCookie,
}

/// Proves `hook` on the server at `base`, with keys that start with `run`: `Ok` when it works
/// (or the profile declares none), else what it did, in one line.
pub async fn calibrate(
    hook: Hook,
    profile: &Profile,
    base: &Base,
    run: &str,
) -> Result<(), String> {
    let session = Session::new(profile, base, run.to_owned());
    match hook {
        Hook::SlowRequest => slow_request(&session).await,
        Hook::FailOnce => fail_once(&session).await,
        Hook::Callers => callers(&session).await,
        Hook::Effects => effects(&session).await,
        Hook::Throws => throws(&session).await,
        Hook::SetsCookie => sets_cookie(&session).await,
    }
}

/// One keyed request with the slow header must take at least half of `slow_ms`: a header the
/// server ignores is answered in the handler's usual few milliseconds.
async fn slow_request(session: &Session<'_>) -> Result<(), String> {
    let Some(in_flight) = &session.profile().in_flight else {
        return Ok(());
    };
    let (name, value) = (&in_flight.slow_header.name, &in_flight.slow_header.value);
    let operation = session.operation();
    let started = Instant::now();
    let sent = session
        .send(&operation, 1, &[(name.clone(), value.clone())])
        .await;
    let took = started.elapsed().as_millis() as u64;
    match sent.answer() {
        None => Err(format!(
            "a request with the slow-request header {name}: {value} got no answer"
        )),
        Some(_) if took >= in_flight.slow_ms / 2 => Ok(()),
        Some(answer) => Err(format!(
            "the slow-request header {name}: {value} does nothing here: a request with it \
             was answered {} in {took} ms, and the profile promises {} ms",
            answer.status, in_flight.slow_ms
        )),
    }
}

/// One keyed request with a fresh value of the fail-once header must get a 5xx.
async fn fail_once(session: &Session<'_>) -> Result<(), String> {
    let Some(fail) = &session.profile().fail_once else {
        return Ok(());
    };
    let operation = session.operation();
    let value = format!("fail-{}", operation.key);
    let header = [(fail.header.clone(), value.clone())];
    let sent = session.send(&operation, 1, &header).await;
    match sent.status() {
        Some(status) if (500..600).contains(&status) => Ok(()),
        Some(status) => Err(format!(
            "the fail-once header {}: {value} does nothing here: a request with it was \
             answered {status}, not a 5xx",
            fail.header
        )),
        None => Err(format!(
            "a request with the fail-once header {} got no answer",
            fail.header
        )),
    }
}

/// Each caller's fresh keyed request must run: a value the server refuses (401, 403) would
/// fail the callers check for the profile's sake.
async fn callers(session: &Session<'_>) -> Result<(), String> {
    let Some(callers) = &session.profile().callers else {
        return Ok(());
    };
    for index in 0..2 {
        let operation = crate::session::Operation {
            caller: index + 1,
            ..session.operation()
        };
        let sent = session.send(&operation, 1, &[]).await;
        let served = sent.answer().is_some_and(|answer| {
            (200..300).contains(&answer.status) && !marked_replay(session.profile(), answer)
        });
        if !served {
            let got = sent
                .status()
                .map_or("no answer".to_owned(), |status| status.to_string());
            return Err(format!(
                "the caller {} is not served here: a fresh request got {got}, not a success",
                callers.describe(index)
            ));
        }
    }
    Ok(())
}

/// The count read before and after one fresh request that ran must differ by one.
async fn effects(session: &Session<'_>) -> Result<(), String> {
    let Some(effects) = &session.profile().effects else {
        return Ok(());
    };
    let read = |breach: crate::session::Breach| breach.what;
    let Some((before, _)) = session.effects().await.map_err(read)? else {
        return Ok(());
    };
    let operation = session.operation();
    let sent = session.send(&operation, 1, &[]).await;
    let Some((after, _)) = session.effects().await.map_err(read)? else {
        return Ok(());
    };
    match sent.status() {
        Some(status) if (200..300).contains(&status) && after == before + 1 => Ok(()),
        Some(status) if (200..300).contains(&status) => Err(format!(
            "the effects path {} does not count this route's effects: a request that ran \
             ({status}) moved {} from {before} to {after}",
            effects.path, effects.field
        )),
        // A first request that does not run is the first check's finding, not the hook's.
        _ => Ok(()),
    }
}

/// One keyed request with a fresh value of the throw header must not succeed: a handler that
/// throws answers a 5xx, or nothing.
async fn throws(session: &Session<'_>) -> Result<(), String> {
    let Some(throws) = &session.profile().throws else {
        return Ok(());
    };
    let operation = session.operation();
    let value = format!("throw-{}", operation.key);
    let header = [(throws.header.clone(), value.clone())];
    let sent = session.send(&operation, 1, &header).await;
    match sent.status() {
        Some(status) if (200..300).contains(&status) => Err(format!(
            "the throw header {}: {value} does nothing here: a request with it was answered \
             {status}",
            throws.header
        )),
        _ => Ok(()),
    }
}

/// One keyed request with the cookie header must get an answer with `Set-Cookie`.
async fn sets_cookie(session: &Session<'_>) -> Result<(), String> {
    let Some(cookie) = &session.profile().cookie else {
        return Ok(());
    };
    let operation = session.operation();
    let header = [(cookie.header.clone(), "1".to_owned())];
    let sent = session.send(&operation, 1, &header).await;
    match sent.answer() {
        Some(answer) if answer.header("set-cookie").is_some() => Ok(()),
        Some(answer) => Err(format!(
            "the cookie header {}: 1 does nothing here: a request with it was answered {} \
             without Set-Cookie",
            cookie.header, answer.status
        )),
        None => Err(format!(
            "a request with the cookie header {} got no answer",
            cookie.header
        )),
    }
}
