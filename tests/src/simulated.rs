//! The stacks the simulator runs: the correct one, and each variant whose bug a network can
//! show. A variant is here exactly when its Cargo.toml declares `simulate` (a test holds both).
//!
//! Stage 8's scenarios run the payments service; stage 9's `foreign` runs the checkout with its
//! provider behind it. A variant runs in the scenarios of its own stage.

use std::ops::Range;

use retrykey_foreign::KeyFn;
use retrykey_foreign::checkout::{Standard, Steps};
use retrykey_sim::{Finding, FinishedRun, SimScenario, Stack};

use crate::declared::Simulated;
use crate::scenario::SimulatorScenario;

/// The checkout around `fresh-foreign-key`'s derived key.
struct FreshForeignKey;

impl Steps for FreshForeignKey {
    fn foreign_key(&self) -> KeyFn {
        fresh_foreign_key::foreign_key
    }
}

/// The checkout around `recovery-point-before-call`'s phases.
struct RecoveryPointBeforeCall;

impl Steps for RecoveryPointBeforeCall {
    fn resume<'a>(
        &self,
        parts: &'a retrykey_foreign::CheckoutParts,
        fence: retrykey_http::Reservation,
        purchase: retrykey_foreign::Purchase,
    ) -> std::pin::Pin<Box<dyn Future<Output = axum::response::Response> + Send + 'a>> {
        Box::pin(recovery_point_before_call::resume(parts, fence, purchase))
    }
}

retrykey_client_checks::variant_steps!(FreshKeyPerRetry, execute = fresh_key_per_retry::execute);
retrykey_client_checks::variant_steps!(
    RetryDefinitiveErrors,
    classify = retry_definitive_errors::classify
);

/// The variants the simulator can run, by name.
pub const VARIANTS: [&str; 7] = [
    "cancel-unsafe",
    "fresh-foreign-key",
    "fresh-key-per-retry",
    "no-fingerprint",
    "recovery-point-before-call",
    "replay-5xx",
    "retry-definitive-errors",
];

/// A `--variant` the simulator cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnknownVariant {
    /// No variant of that name runs in the simulator.
    #[error("the simulator runs no variant named {0:?}; it runs: {list}", list = VARIANTS.join(", "))]
    Named(String),
    /// The variant is another stage's than the scenario.
    #[error(
        "the variant {variant} runs in {}, not in {scenario}",
        scenarios_of(variant)
    )]
    Elsewhere {
        /// The variant.
        variant: String,
        /// The scenario asked for.
        scenario: SimulatorScenario,
    },
}

/// The variants of stage 9, which run in its scenario only.
const FOREIGN_VARIANTS: [&str; 2] = ["fresh-foreign-key", "recovery-point-before-call"];

/// The scenarios `variant` runs in, as the command line names them.
fn scenarios_of(variant: &str) -> String {
    let foreign = FOREIGN_VARIANTS.contains(&variant);
    let fits = SimulatorScenario::ALL
        .into_iter()
        .filter(|scenario| foreign == (*scenario == SimulatorScenario::Foreign));
    fits.map(SimulatorScenario::name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks that `variant` (or the correct stack, for `None`) is one the simulator runs, in
/// `scenario`.
pub fn known(variant: Option<&str>, scenario: SimulatorScenario) -> Result<(), UnknownVariant> {
    let Some(name) = variant else {
        return Ok(());
    };
    let foreign = FOREIGN_VARIANTS.contains(&name);
    if !VARIANTS.contains(&name) || foreign != (scenario == SimulatorScenario::Foreign) {
        return Err(elsewhere(name, scenario));
    }
    Ok(())
}

/// Runs `seed` of `scenario` on the correct stack (`None`) or on `variant`.
pub fn run(
    variant: Option<&str>,
    scenario: SimulatorScenario,
    seed: u64,
) -> Result<FinishedRun, UnknownVariant> {
    match scenario {
        SimulatorScenario::Payments(scenario) => run_payments(variant, scenario, seed),
        SimulatorScenario::Foreign => run_foreign(variant, seed),
    }
}

fn run_foreign(variant: Option<&str>, seed: u64) -> Result<FinishedRun, UnknownVariant> {
    let steps: &'static dyn Steps = match variant {
        None => &Standard,
        Some("fresh-foreign-key") => &FreshForeignKey,
        Some("recovery-point-before-call") => &RecoveryPointBeforeCall,
        Some(other) => return Err(elsewhere(other, SimulatorScenario::Foreign)),
    };
    Ok(retrykey_foreign::sim::run(steps, seed))
}

/// The error for `variant` asked of `scenario`: another stage's, or none of the simulator's.
fn elsewhere(variant: &str, scenario: SimulatorScenario) -> UnknownVariant {
    if VARIANTS.contains(&variant) {
        UnknownVariant::Elsewhere {
            variant: variant.to_owned(),
            scenario,
        }
    } else {
        UnknownVariant::Named(variant.to_owned())
    }
}

fn run_payments(
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
        Some(other) => return Err(elsewhere(other, SimulatorScenario::Payments(scenario))),
    })
}

/// The first seed of `seeds` that fails, with its run.
pub fn first_failure(
    variant: Option<&str>,
    scenario: SimulatorScenario,
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
    let scenario: SimulatorScenario = declared.scenario.parse().map_err(|e| format!("{e}"))?;
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
