//! Stage 8: ten thousand lost replies.
//!
//! The lab's real retry client and its real `Idempotency-Key` layer, in front of the real
//! payments handler, run in a simulated network ([turmoil]): hosts, simulated TCP, a simulated
//! clock. A seed chooses the hardship (answers cut off after the request arrived, latency,
//! partitions and holds, clients that give up mid-request, a handler that fails before its
//! effect, a server that crashes and restarts), the clients' jitter and keys, and every other
//! draw. After each run, a checker that shares no code with the layer judges the whole history
//! ([`retrykey_history`], whose types and rules are re-exported here). A failing seed replays
//! exactly: same seed, same history, byte for byte.
//!
//! # Reading order
//!
//! 1. `retrykey-history`: what a run records, and the rules a history must keep.
//! 2. `plan.rs`: the hardship one seed draws.
//! 3. `run.rs`: one run: the hosts, the clients' operations, the faults applied on time.
//! 4. `server.rs` and `net.rs`: the real layer served by hyper on a simulated host, and the
//!    real retry client's attempts over simulated TCP, each with its thin recorder.
//! 5. `trace.rs` and `summary.rs`: a run for people (timeline, diagram) and many runs in figures.
//!
//! A later stage builds a scenario of its own from the same parts: a [`Scene`] with its
//! service on host `server` ([`serve_cutting`] loses its answers as this one's are lost), any
//! host behind it reached with [`call`], and the lab's clients.
//!
//! # Example
//!
//! ```
//! use retrykey_sim::{SimScenario, Stack, run};
//!
//! let first = run(&Stack::correct(), SimScenario::LostReply, 7);
//! assert!(first.finding.is_none(), "{:?}", first.finding);
//! // The same seed gives the same history.
//! let again = run(&Stack::correct(), SimScenario::LostReply, 7);
//! assert_eq!(first.entries, again.entries);
//! ```

mod net;
mod plan;
mod run;
mod server;
mod stack;
mod summary;
pub mod trace;

pub use net::call;
pub use plan::{Plan, PlannedFault, SimRng, rng};
pub use retrykey_history::{
    Ended, Entry, HandlerEnd, History, HistoryEvent, NoReply, OpId, Reply, Rule, Violation, judge,
    short_key, violations,
};
pub use run::{
    CLIENTS, Finding, FinishedRun, OPS_PER_CLIENT, RESTART_FINDS_WITHIN, Scene, SimScenario,
    TIME_LIMIT, UnknownScenario, run,
};
pub use server::{Cuts, PORT, serve_cutting};
pub use stack::{MakeStore, Stack, WithEngine};
pub use summary::{Summary, first_failure};

/// Seeds of the lost-reply scenario that [`sim_suite!`] runs: more than any declared variant
/// needs (the worst of them is caught by its twentieth seed), about two seconds in a debug build.
pub const SUITE_SEEDS: u64 = 60;

/// The simulator as a suite: a module `sim` whose one `#[test]`,
/// `sim::lost_reply_seeds_keep_every_rule`, runs [`SUITE_SEEDS`] seeds of the lost-reply
/// scenario against `stack` (a [`Stack`] expression) and fails at the first seed that breaks a
/// rule, naming the seed and the rule. That seed's timeline is written beside the test's build,
/// in `target/tmp/simulated-<package>/` (the message says where), as `just simulate --trace`
/// prints one.
#[macro_export]
macro_rules! sim_suite {
    ($stack:expr) => {
        mod sim {
            // The stack expression may name the test program's own items (a variant's steps).
            #[allow(unused_imports)]
            use super::*;

            #[test]
            fn lost_reply_seeds_keep_every_rule() {
                $crate::check_seeds(
                    &$stack,
                    $crate::SimScenario::LostReply,
                    $crate::SUITE_SEEDS,
                    &::std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
                        .join(concat!("simulated-", env!("CARGO_PKG_NAME"))),
                );
            }
        }
    };
}

/// Runs seeds `0..seeds` of `scenario` on `stack`; at the first that fails, writes its timeline
/// into `folder` and panics with the seed, the broken rule and the timeline's file.
#[doc(hidden)]
pub fn check_seeds<P: retrykey_client::RetrySteps>(
    stack: &Stack<P>,
    scenario: SimScenario,
    seeds: u64,
    folder: &std::path::Path,
) {
    let Some(run) = first_failure(stack, scenario, 0..seeds) else {
        return;
    };
    let finding = run.finding.as_ref().expect("a failing run has a finding");
    let file = folder.join(format!("{scenario}-seed-{}.txt", run.seed));
    let written = std::fs::create_dir_all(folder)
        .and_then(|()| std::fs::write(&file, trace::timeline(&run)))
        .map_or_else(
            |error| format!("(its timeline could not be written: {error})"),
            |()| format!("its timeline: {}", file.display()),
        );
    panic!(
        "seed {} of {scenario} failed: {finding}\n{written}",
        run.seed
    );
}
