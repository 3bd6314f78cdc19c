//! Chaos: many operations at once, each retried under its key until an answer settles it, all
//! through the kit's fault proxy. Nothing is told what to look for: the whole history is judged
//! by the shared rules, and a run that breaks one is cut down to the fewest operations that
//! still break it.
//!
//! The plan is drawn from a seed, an operation at a time, so that a smaller run keeps each
//! remaining operation as it was: its key, its caller, its body, and the fault of each attempt.
//! Besides fresh operations, it draws the cases a layer gets wrong: copies of one operation sent
//! together, a key reused with another body, and one key chosen by two callers.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::checks::all;
use crate::judge::judge;
use crate::profile::Profile;
use crate::proxy::{ExchangeFault, FAULT_HEADER, HttpFaultProxy};
use crate::session::{Breach, Exchange, Operation, Sent, Session, marked_replay};
use crate::wire::Base;
use crate::witness::{WitnessLine, witness};

/// The most attempts one operation gets.
pub const MAX_ATTEMPTS: u32 = 8;

/// The most runs the kit spends cutting a failure down.
pub const SHRINK_RUNS: usize = 40;
/// The longest the kit spends cutting a failure down.
pub const SHRINK_TIME: Duration = Duration::from_secs(40);

/// In ten attempts, how many lose their answer, are reset, and are delayed.
pub const FAULTS_IN_TEN: [u64; 3] = [2, 1, 1];
/// The longest a delayed request is held back, in milliseconds.
pub const MAX_DELAY_MS: u64 = 150;
/// In ten operations, how many send their first attempt as two copies at once.
pub const COPIES_IN_TEN: u64 = 3;

/// How often a smaller run is tried before the kit takes it to pass: a race may be lost once.
const TRIES: usize = 2;

/// How far back in the plan an operation may reuse a key.
const RECENT: usize = 8;

/// One operation of the plan.
#[derive(Debug, Clone)]
struct Planned {
    /// Its place in the plan, from 0.
    index: usize,
    /// The operation whose key it uses (its own, unless it reuses one).
    key_of: usize,
    /// Which of the profile's callers sends it (0: none).
    caller: usize,
    /// Its body's number.
    n: u64,
    /// Copies of its first attempt sent together (1 or 2).
    copies: u32,
}

/// A small generator of the plan's choices (SplitMix64): a plan is the same on every machine.
struct Draw(u64);

impl Draw {
    fn new(seed: u64, index: usize, attempt: u32) -> Self {
        let mixed = seed ^ (index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ u64::from(attempt);
        Self(mixed.wrapping_mul(0xbf58_476d_1ce4_e5b9))
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n.max(1)
    }
}

/// `count` operations drawn from `seed`: most fresh, some reusing a recent one's key with
/// another body (15 in 100), some a recent key chosen by the other caller (15 in 100, with
/// two callers), and [`COPIES_IN_TEN`] in ten sent as two copies at once.
fn plan(seed: u64, count: usize, callers: bool) -> Vec<Planned> {
    let mut ops: Vec<Planned> = Vec::with_capacity(count);
    for index in 0..count {
        let mut draw = Draw::new(seed, index, 0);
        // A key is reused only by an operation close behind its own, well within any expiry.
        let back = draw.below(index.clamp(1, RECENT) as u64) as usize;
        let (roll, earlier) = (draw.below(100), index.saturating_sub(back + 1));
        let fresh_caller = if callers {
            1 + draw.below(2) as usize
        } else {
            0
        };
        let n = index as u64 + 1;
        let (key_of, caller, n) = match ops.get(earlier) {
            Some(old) if index > 0 && roll < 15 => (old.key_of, old.caller, n),
            Some(old) if callers && roll < 30 => (old.key_of, 3 - old.caller, old.n),
            _ => (index, fresh_caller, n),
        };
        let copies = if draw.below(10) < COPIES_IN_TEN { 2 } else { 1 };
        ops.push(Planned {
            index,
            key_of,
            caller,
            n,
            copies,
        });
    }
    ops
}

/// The fault of attempt `attempt` of operation `index`, in the shares of [`FAULTS_IN_TEN`].
fn fault(seed: u64, index: usize, attempt: u32) -> ExchangeFault {
    let mut draw = Draw::new(seed, index, attempt);
    let [lost, reset, delayed] = FAULTS_IN_TEN;
    match draw.below(10) {
        roll if roll < lost => ExchangeFault::Lose,
        roll if roll < lost + reset => ExchangeFault::Reset,
        roll if roll < lost + reset + delayed => ExchangeFault::Delay(draw.below(MAX_DELAY_MS)),
        _ => ExchangeFault::Pass,
    }
}

/// What a chaos run found.
#[derive(Debug, Clone, Serialize)]
pub struct ChaosReport {
    /// The server's base URL.
    pub base: String,
    /// The seed the plan was drawn from (`--seed` repeats it).
    pub seed: u64,
    /// Operations in the plan.
    pub operations: usize,
    /// Exchanges the first run made.
    pub exchanges: usize,
    /// Connections the proxy reset, answers it lost and requests it held back, in that run.
    pub faults: [u64; 3],
    /// Effects the server counted in that run, where the profile names its count.
    pub effects: Option<u64>,
    /// The broken rules, cut down, or `None` when every rule held.
    pub failure: Option<ChaosFailure>,
}

/// A chaos run that broke a rule, cut down to the fewest operations that still break one.
#[derive(Debug, Clone, Serialize)]
pub struct ChaosFailure {
    /// What broke, one sentence each.
    pub breaches: Vec<String>,
    /// Operations in the smallest failing run.
    pub operations: usize,
    /// Runs made to cut it down.
    pub runs: usize,
    /// Exchanges of the smallest failing run.
    pub exchanges: usize,
    /// The exchanges that show it.
    pub witness: Vec<WitnessLine>,
}

/// One run of a plan: its exchanges, its breaches, and its tallies.
struct Outcome {
    exchanges: Vec<Exchange>,
    breaches: Vec<Breach>,
    faults: [u64; 3],
    effects: Option<u64>,
}

/// Runs `operations` operations drawn from `seed` against the server at `base`, through a
/// fault proxy of the kit's own, and judges the history; a failure is cut down before it is
/// reported.
pub async fn chaos(
    profile: &Profile,
    base: &Base,
    operations: usize,
    seed: u64,
) -> std::io::Result<ChaosReport> {
    let ops = plan(seed, operations, profile.callers.is_some());
    let first = run_plan(profile, base, &ops, seed, "c0").await?;
    let failure = match first.breaches.is_empty() {
        true => None,
        false => Some(shrink(profile, base, ops, seed, &first).await?),
    };
    Ok(ChaosReport {
        base: base.to_string(),
        seed,
        operations,
        exchanges: first.exchanges.len(),
        faults: first.faults,
        effects: first.effects,
        failure,
    })
}

/// Drops runs of operations while the plan still fails: halves first, then smaller pieces,
/// within [`SHRINK_RUNS`] runs and [`SHRINK_TIME`].
async fn shrink(
    profile: &Profile,
    base: &Base,
    mut ops: Vec<Planned>,
    seed: u64,
    first: &Outcome,
) -> std::io::Result<ChaosFailure> {
    let started = Instant::now();
    let mut smallest: Option<Outcome> = None;
    let mut runs = 1;
    let mut piece = ops.len() / 2;
    while piece >= 1 && runs < SHRINK_RUNS && started.elapsed() < SHRINK_TIME {
        let mut at = 0;
        let mut cut = false;
        while at < ops.len() && runs < SHRINK_RUNS && started.elapsed() < SHRINK_TIME {
            let mut candidate = ops.clone();
            candidate.drain(at..(at + piece).min(ops.len()));
            if candidate.is_empty() {
                at += piece;
                continue;
            }
            let mut failed = None;
            for _ in 0..TRIES {
                runs += 1;
                let outcome =
                    run_plan(profile, base, &candidate, seed, &format!("c{runs}")).await?;
                if !outcome.breaches.is_empty() {
                    failed = Some(outcome);
                    break;
                }
            }
            match failed {
                Some(outcome) => {
                    ops = candidate;
                    smallest = Some(outcome);
                    cut = true;
                }
                None => at += piece,
            }
        }
        if !cut {
            piece /= 2;
        }
    }
    let outcome = smallest.as_ref().unwrap_or(first);
    let shown: Vec<usize> = (outcome.breaches.iter())
        .flat_map(|breach| breach.exchanges.iter().copied())
        .collect();
    Ok(ChaosFailure {
        breaches: outcome.breaches.iter().map(|b| b.what.clone()).collect(),
        operations: ops.len(),
        runs,
        exchanges: outcome.exchanges.len(),
        witness: witness(profile, &outcome.exchanges, &shown),
    })
}

/// Sends every operation of `ops`, `scale.parallel` at a time, through a fresh proxy, and
/// judges what came back.
async fn run_plan(
    profile: &Profile,
    base: &Base,
    ops: &[Planned],
    seed: u64,
    run: &str,
) -> std::io::Result<Outcome> {
    let proxy = HttpFaultProxy::start(base).await?;
    let run = format!("{}.{run}", crate::run::run_id());
    let session = Session::new(profile, proxy.base(), run.clone());
    let mut breaches = Vec::new();
    let before = session.effects().await.unwrap_or_else(|breach| {
        breaches.push(breach);
        None
    });
    for wave in ops.chunks(profile.scale.parallel) {
        all(wave
            .iter()
            .map(|planned| drive(&session, planned, seed))
            .collect())
        .await;
    }
    let after = match before {
        Some(_) => session.effects().await.unwrap_or_else(|breach| {
            breaches.push(breach);
            None
        }),
        None => None,
    };
    let exchanges = session.exchanges();
    breaches.extend(judge(profile, &exchanges));
    breaches.extend(ran_twice(profile, &exchanges));
    let made = before
        .zip(after)
        .map(|((b, _), (a, _))| a.saturating_sub(b));
    let reads: Vec<usize> = before.iter().chain(&after).map(|(_, n)| *n).collect();
    breaches.extend(made.and_then(|made| effects_breach(&exchanges, made, &reads)));
    let counts = proxy.counts();
    let load =
        |count: &std::sync::atomic::AtomicU64| count.load(std::sync::atomic::Ordering::Relaxed);
    Ok(Outcome {
        exchanges,
        breaches,
        faults: [
            load(&counts.reset),
            load(&counts.lost),
            load(&counts.delayed),
        ],
        effects: made,
    })
}

/// One operation: its first attempt (two copies at once, if planned), then retries under the
/// same key until an answer settles it, within [`MAX_ATTEMPTS`] and the profile's timeout.
async fn drive(session: &Session<'_>, planned: &Planned, seed: u64) {
    let profile = session.profile();
    let op = Operation {
        id: planned.index as u32 + 1,
        key: session.key_named(&format!("x{}", planned.key_of)),
        caller: planned.caller,
        n: planned.n,
        path: profile.request.path.clone(),
        life: 0,
    };
    let send = |attempt: u32| {
        let header = fault(seed, planned.index, attempt)
            .value()
            .map(|value| (FAULT_HEADER.to_owned(), value));
        let extra: Vec<(String, String)> = header.into_iter().collect();
        let op = &op;
        async move { session.send(op, attempt, &extra).await }
    };
    let deadline = Instant::now() + Duration::from_millis(profile.scale.timeout_ms);
    let mut settled = false;
    let mut attempt = 1;
    if planned.copies == 2 {
        let (a, b) = tokio::join!(send(1), send(2));
        settled = settles(&a) || settles(&b);
        attempt = 3;
    }
    while !settled && attempt <= MAX_ATTEMPTS && Instant::now() < deadline {
        if attempt > 1 {
            tokio::time::sleep(Duration::from_millis(10 * u64::from(attempt))).await;
        }
        settled = settles(&send(attempt).await);
        attempt += 1;
    }
}

/// An answer that ends the retrying: anything but no answer, a 409 (still running) or a 5xx.
fn settles(sent: &Sent) -> bool {
    sent.status()
        .is_some_and(|status| status < 500 && status != 409)
}

/// Keys that got two successes neither of which was marked a replay: the operation ran twice.
/// Only a profile with a replay marker can tell a replay from a run.
fn ran_twice(profile: &Profile, exchanges: &[Exchange]) -> Vec<Breach> {
    if profile.replay.header.is_none() {
        return Vec::new();
    }
    let mut fresh: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for exchange in exchanges {
        let (Some((op, _)), Some(answer)) = (&exchange.attempt, exchange.answer()) else {
            continue;
        };
        if (200..300).contains(&answer.status) && !marked_replay(profile, answer) {
            fresh
                .entry(op.judged_key())
                .or_default()
                .push(exchange.number);
        }
    }
    fresh
        .into_iter()
        .filter(|(_, numbers)| numbers.len() > 1)
        .take(1)
        .map(|(key, numbers)| {
            Breach::new(
                format!(
                    "key {key} got {} successes not marked as replays: its operation ran more \
                     than once",
                    numbers.len()
                ),
                &numbers,
            )
        })
        .collect()
}

/// At most one effect per key sent, and at least one per key that got a success.
fn effects_breach(exchanges: &[Exchange], made: u64, reads: &[usize]) -> Option<Breach> {
    let mut sent: BTreeSet<String> = BTreeSet::new();
    let mut succeeded: BTreeSet<String> = BTreeSet::new();
    let mut keyed = Vec::new();
    for exchange in exchanges {
        if let Some((op, _)) = &exchange.attempt {
            sent.insert(op.judged_key());
            keyed.push(exchange.number);
            if exchange
                .answer()
                .is_some_and(|a| (200..300).contains(&a.status))
            {
                succeeded.insert(op.judged_key());
            }
        }
    }
    let shown: Vec<usize> = reads.iter().chain(&keyed).copied().collect();
    if made > sent.len() as u64 {
        return Some(Breach::new(
            format!(
                "{made} effects for {}: some key's operation ran more than once",
                keys(sent.len())
            ),
            &shown,
        ));
    }
    (made < succeeded.len() as u64).then(|| {
        Breach::new(
            format!(
                "{made} effects for {} answered with a success: a success without its effect",
                keys(succeeded.len())
            ),
            &shown,
        )
    })
}

fn keys(count: usize) -> String {
    match count {
        1 => "1 key".to_owned(),
        n => format!("{n} keys"),
    }
}

impl ChaosReport {
    /// The run in a few lines: the plan and its faults, then the verdict and its witness.
    pub fn text(&self) -> String {
        let [reset, lost, delayed] = self.faults;
        let mut out = format!(
            "chaos: {} operations (seed {}), {} exchanges through the fault proxy: {lost} \
             answers lost, {reset} connections reset, {delayed} requests delayed\n",
            self.operations, self.seed, self.exchanges
        );
        let Some(failure) = &self.failure else {
            let effects = self.effects.map_or(String::new(), |made| {
                format!(", with {made} effects counted")
            });
            out.push_str(&format!("every rule held{effects}\n"));
            return out;
        };
        out.push_str("FAIL\n");
        for breach in &failure.breaches {
            out.push_str(&format!("  {breach}\n"));
        }
        out.push_str(&format!(
            "  shrunk from {} operations to {} in {} runs\n  witness: {} of the {} exchanges of that run\n",
            self.operations,
            failure.operations,
            failure.runs,
            failure.witness.len(),
            failure.exchanges
        ));
        out.push_str(&crate::report::witness_text(&failure.witness));
        out
    }
}
