//! Proof that a profile's hook works on this server before a check relies on it: a hook that
//! does nothing would let its checks pass without testing what they name.

use std::time::Instant;

use crate::profile::Profile;
use crate::session::Session;
use crate::wire::Base;

/// A hook of the profile that a check relies on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hook {
    /// `[in_flight] slow_header`: a request that carries it runs at least `slow_ms`.
    SlowRequest,
}

impl Hook {
    /// Every hook the kit proves.
    pub const ALL: [Hook; 1] = [Hook::SlowRequest];
}

/// Proves `hook` on the server at `base`, with keys that start with `run`: `Ok` when it works
/// (or the profile declares none), else what it did, in one line.
pub async fn calibrate(
    hook: Hook,
    profile: &Profile,
    base: &Base,
    run: &str,
) -> Result<(), String> {
    match hook {
        Hook::SlowRequest => slow_request(profile, base, run).await,
    }
}

/// One keyed request with the slow header must take at least half of `slow_ms`: a header the
/// server ignores is answered in the handler's usual few milliseconds.
async fn slow_request(profile: &Profile, base: &Base, run: &str) -> Result<(), String> {
    let Some(in_flight) = &profile.in_flight else {
        return Ok(());
    };
    let (name, value) = (&in_flight.slow_header.name, &in_flight.slow_header.value);
    let session = Session::new(profile, base, run.to_owned());
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
