//! The stacks the simulator runs: the correct one, and each variant whose bug a network can
//! show. A variant is here exactly when its Cargo.toml declares `simulate` (a test holds both).

use retrykey_sim::{Finding, FinishedRun, SimScenario, Stack};

use crate::declared::Simulated;
use std::ops::Range;

retrykey_client_checks::variant_steps!(FreshKeyPerRetry, execute = fresh_key_per_retry::execute);
retrykey_client_checks::variant_steps!(
    RetryDefinitiveErrors,
    classify = retry_definitive_errors::classify
);

/// The variants the simulator can run, by name.
pub const VARIANTS: [&str; 5] = [
    "cancel-unsafe",
    "fresh-key-per-retry",
    "no-fingerprint",
    "replay-5xx",
    "retry-definitive-errors",
];

/// A `--variant` the simulator cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the simulator runs no variant named {0:?}; it runs: {list}", list = VARIANTS.join(", "))]
pub struct UnknownVariant(pub String);

/// Checks that `variant` (or the correct stack, for `None`) is one the simulator runs.
pub fn known(variant: Option<&str>) -> Result<(), UnknownVariant> {
    match variant {
        Some(name) if !VARIANTS.contains(&name) => Err(UnknownVariant(name.to_owned())),
        _ => Ok(()),
    }
}

/// Runs `seed` of `scenario` on the correct stack (`None`) or on `variant`.
pub fn run(
    variant: Option<&str>,
    scenario: SimScenario,
    seed: u64,
) -> Result<FinishedRun, UnknownVariant> {
    let correct = Stack::correct();
    Ok(match variant {
        None => retrykey_sim::run(&correct, scenario, seed),
        Some("cancel-unsafe") => retrykey_sim::run(
            &correct.with_engine(|builder| builder.engine(cancel_unsafe::CancelUnsafe)),
            scenario,
            seed,
        ),
        Some("fresh-key-per-retry") => {
            retrykey_sim::run(&correct.with_steps::<FreshKeyPerRetry>(), scenario, seed)
        }
        Some("no-fingerprint") => retrykey_sim::run(
            &correct.with_engine(|builder| builder.engine(no_fingerprint::NoFingerprint)),
            scenario,
            seed,
        ),
        Some("replay-5xx") => retrykey_sim::run(
            &correct.with_engine(|builder| builder.engine(replay_5xx::Replay5xx)),
            scenario,
            seed,
        ),
        Some("retry-definitive-errors") => retrykey_sim::run(
            &correct.with_steps::<RetryDefinitiveErrors>(),
            scenario,
            seed,
        ),
        Some(other) => return Err(UnknownVariant(other.to_owned())),
    })
}

/// The first seed of `seeds` that fails, with its run.
pub fn first_failure(
    variant: Option<&str>,
    scenario: SimScenario,
    seeds: Range<u64>,
) -> Result<Option<FinishedRun>, UnknownVariant> {
    for seed in seeds {
        let run = run(variant, scenario, seed)?;
        if run.finding.is_some() {
            return Ok(Some(run));
        }
    }
    Ok(None)
}

/// The check a variant's `simulate` declares: the first failing seed among `0..within` of its
/// scenario, broken by the declared rule, and the same history when that seed runs again.
/// Returns that run; `Err` says what is wrong, in one line.
pub fn caught_as_declared(name: &str, declared: &Simulated) -> Result<FinishedRun, String> {
    let scenario: SimScenario = declared.scenario.parse().map_err(|e| format!("{e}"))?;
    let first = first_failure(Some(name), scenario, 0..declared.within)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| {
            format!(
                "the simulator did not catch it within {} seeds of {scenario}",
                declared.within
            )
        })?;
    let finding = first.finding.as_ref().expect("a failing run has a finding");
    let rule = match finding {
        Finding::Broke(violation) => violation.rule.name(),
        Finding::Stalled(_) => "stalled",
    };
    if rule != declared.rule {
        return Err(format!(
            "seed {} of {scenario} failed by {finding}, not by the declared rule {}",
            first.seed, declared.rule
        ));
    }
    let again = run(Some(name), scenario, first.seed).map_err(|e| e.to_string())?;
    if again.entries != first.entries || again.finding != first.finding {
        return Err(format!(
            "seed {} of {scenario} did not replay exactly: two runs, two histories",
            first.seed
        ));
    }
    Ok(first)
}
