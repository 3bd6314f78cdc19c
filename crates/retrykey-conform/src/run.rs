//! Running the checks: each once, judged by its own expectations and the shared rules; a
//! failure run again at smaller sizes, so that its witness is the smallest run that fails.

use std::time::{Duration, Instant};

use crate::calibrate::{Hook, calibrate};
use crate::checks::{CHECKS, KitCheck};
use crate::judge::judge;
use crate::profile::{MAX_EXPIRY_MS, Profile};
use crate::report::{CheckReport, CheckVerdict, FailedCheck, KitReport, NOT_JUDGED};
use crate::session::{Breach, Ending, Exchange, Session};
use crate::wire::Base;
use crate::witness::witness;

/// Why the kit did not run.
#[derive(Debug, thiserror::Error)]
pub enum KitError {
    /// A check name the kit does not have.
    #[error("the kit has no check named {0:?}")]
    UnknownCheck(String),
    /// Nothing answers at the base URL: every check would fail for the same reason.
    #[error("nothing answers at {base}: {why}")]
    Unreachable {
        /// The base URL.
        base: String,
        /// Why the connection failed.
        why: crate::wire::WireError,
    },
}

/// Whether the server answers one fresh keyed request as the profile's server would, with a
/// 2xx: `None` when it does; else one line on what it answered. The kit asks it before a run
/// that assumes the lab's own profile, so that a server unlike the lab's payments is told so
/// first, not by a table of failures.
pub async fn unlike(profile: &Profile, base: &Base) -> Option<String> {
    let session = Session::new(profile, base, format!("{}.probe", run_id()));
    let operation = session.operation();
    let sent = session.send(&operation, 1, &[]).await;
    let request = format!("{} {}", profile.request.method, profile.request.path);
    match sent.answer() {
        Some(answer) if (200..300).contains(&answer.status) => None,
        Some(answer) => Some(format!("{request} answered {}", answer.status)),
        // No answer says nothing of the profile: the run says what it says of the server.
        None => None,
    }
}

/// One failing run: what broke, and every exchange of the run.
struct Failed {
    breaches: Vec<Breach>,
    exchanges: Vec<Exchange>,
    size: Option<usize>,
}

/// Runs every check (or those named in `only`) against the server at `base`.
pub async fn run(profile: &Profile, base: &Base, only: &[String]) -> Result<KitReport, KitError> {
    if let Some(unknown) = only
        .iter()
        .find(|name| crate::checks::by_name(name).is_none())
    {
        return Err(KitError::UnknownCheck(unknown.clone()));
    }
    let chosen = |check: &KitCheck| only.is_empty() || only.iter().any(|name| name == check.name);
    // Only a run that will send something needs a server: a profile's skips can be read offline.
    if CHECKS
        .iter()
        .any(|check| chosen(check) && (check.skipped)(profile).is_none())
    {
        crate::wire::reachable(base)
            .await
            .map_err(|why| KitError::Unreachable {
                base: base.to_string(),
                why,
            })?;
    }
    let kit = run_id();
    let runs = |check: &KitCheck| chosen(check) && (check.skipped)(profile).is_none();
    let chosen_checks: Vec<&KitCheck> = CHECKS.iter().filter(|check| runs(check)).collect();
    let broken = broken_hooks(profile, base, &kit, &chosen_checks).await;
    // A server whose count does not follow its effects is judged without it.
    let judged = match broken.iter().any(|(hook, _)| *hook == Hook::Effects) {
        true => Profile {
            effects: None,
            ..profile.clone()
        },
        false => profile.clone(),
    };
    let mut checks: Vec<CheckReport> = Vec::new();
    for (index, check) in CHECKS.iter().enumerate() {
        if !chosen(check) {
            continue;
        }
        let run = format!("{kit}.{index}");
        let unproved = (broken.iter()).find(|(hook, _)| check.hooks.contains(hook));
        checks.push(match (unproved, refuted(check, &checks)) {
            (Some((_, why)), _) => CheckReport::not_judged(check, why),
            (None, Some(why)) => CheckReport::not_judged(check, &why),
            (None, None) => run_check(&judged, base, check, &run).await,
        });
    }
    Ok(KitReport {
        base: base.to_string(),
        checks,
    })
}

/// Each hook the checks in `checks` rely on, proved once, in the order the checks name them:
/// those that do not work, with what the server did.
async fn broken_hooks(
    profile: &Profile,
    base: &Base,
    kit: &str,
    checks: &[&KitCheck],
) -> Vec<(Hook, String)> {
    let mut needed: Vec<Hook> = Vec::new();
    for hook in checks.iter().flat_map(|check| check.hooks) {
        if !needed.contains(hook) {
            needed.push(*hook);
        }
    }
    let mut broken = Vec::new();
    for (index, hook) in needed.into_iter().enumerate() {
        let run = format!("{kit}.hook{index}");
        if let Err(why) = calibrate(hook, profile, base, &run).await {
            broken.push((hook, why));
        }
    }
    broken
}

/// Why `check` is not judged after the reports `done`: a check it stands on failed (or was
/// itself not judged for that cause). One line that ends with `see` and that check's name.
pub fn refuted(check: &KitCheck, done: &[CheckReport]) -> Option<String> {
    let before = |name: &&str| done.iter().find(|report| report.name == *name);
    check
        .after
        .iter()
        .filter_map(before)
        .find_map(|report| match &report.verdict {
            CheckVerdict::Failed(failed) => {
                let breach = failed.breaches.first().map_or("", String::as_str);
                Some(format!("{breach}, see {}", report.name))
            }
            CheckVerdict::Skipped { reason } => {
                let why = reason.strip_prefix(NOT_JUDGED)?;
                let points = CHECKS
                    .iter()
                    .any(|c| why.ends_with(&format!(", see {}", c.name)));
                points.then(|| why.to_owned())
            }
            CheckVerdict::Passed => None,
        })
}

async fn run_check(profile: &Profile, base: &Base, check: &KitCheck, run: &str) -> CheckReport {
    let started = Instant::now();
    let verdict = match (check.skipped)(profile) {
        Some(reason) => CheckVerdict::Skipped { reason },
        None => match judged_run(
            profile,
            base,
            check,
            (check.size)(profile),
            &format!("{run}.0"),
        )
        .await
        {
            None => CheckVerdict::Passed,
            Some(failed) => {
                let smallest = shrink(profile, base, check, failed, run).await;
                CheckVerdict::Failed(failure(profile, smallest, (check.size)(profile)))
            }
        },
    };
    CheckReport {
        name: check.name,
        source: check.source.to_string(),
        verdict,
        ms: started.elapsed().as_millis() as u64,
    }
}

/// One run of `check` at `size`: `None` when nothing broke.
async fn judged_run(
    profile: &Profile,
    base: &Base,
    check: &KitCheck,
    size: Option<usize>,
    run: &str,
) -> Option<Failed> {
    let session = Session::new(profile, base, run.to_owned());
    let own = (check.run)(&session, size.unwrap_or(1)).await;
    let exchanges = session.exchanges();
    let mut breaches: Vec<Breach> = own.err().into_iter().collect();
    breaches.extend(judge(profile, &exchanges));
    (!breaches.is_empty()).then_some(Failed {
        breaches,
        exchanges,
        size,
    })
}

/// The smallest failing run: sizes halved while they still fail, then the gap between the
/// last failing size and the first passing one searched by halves.
async fn shrink(
    profile: &Profile,
    base: &Base,
    check: &KitCheck,
    failed: Failed,
    run: &str,
) -> Failed {
    // A run that lost its connection or timed out failed for the server's reach, not its size.
    let transport = failed
        .exchanges
        .iter()
        .any(|exchange| matches!(exchange.outcome, Ending::Failed(_)));
    let Some(mut failing) = failed.size.filter(|_| !transport) else {
        return failed;
    };
    let settle = profile
        .expiry
        .as_ref()
        .filter(|e| check.settles && e.after_ms.saturating_add(e.grace_ms) <= MAX_EXPIRY_MS)
        .map(|e| Duration::from_millis(e.after_ms.saturating_add(e.grace_ms)));
    let mut smallest = failed;
    let mut passing = 0;
    let mut tries = 0;
    while failing - passing > 1 {
        let size = if passing == 0 {
            failing / 2
        } else {
            passing + (failing - passing) / 2
        };
        tries += 1;
        if let Some(settle) = settle {
            tokio::time::sleep(settle).await;
        }
        match judged_run(profile, base, check, Some(size), &format!("{run}.{tries}")).await {
            Some(failed) => {
                failing = size;
                smallest = failed;
            }
            None => passing = size,
        }
    }
    smallest
}

fn failure(profile: &Profile, failed: Failed, first_size: Option<usize>) -> FailedCheck {
    let shown: Vec<usize> = failed
        .breaches
        .iter()
        .flat_map(|breach| breach.exchanges.iter().copied())
        .collect();
    let named: std::collections::BTreeSet<usize> = shown.iter().copied().collect();
    FailedCheck {
        breaches: failed
            .breaches
            .iter()
            .map(|breach| breach.what.clone())
            .collect(),
        size: failed.size,
        first_size,
        exchanges: failed.exchanges.len(),
        named: named.len(),
        witness: witness(profile, &failed.exchanges, &shown),
    }
}

/// A short name for this run of the kit, so its keys are new to a server that keeps old ones.
pub(crate) fn run_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos() as u64);
    let mixed = (nanos ^ (u64::from(std::process::id()) << 32)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    format!("{:06x}", mixed >> 40)
}
