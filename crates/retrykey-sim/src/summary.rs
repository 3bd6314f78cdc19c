//! Many runs in figures: how operations ended, how often they retried, what was replayed.

use std::collections::BTreeMap;
use std::ops::Range;

use retrykey_client::RetrySteps;
use retrykey_history::{Ended, HistoryEvent, Reply};

use crate::run::{FinishedRun, SimScenario, run};
use crate::stack::Stack;

/// Counts over the runs added so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Runs added.
    pub runs: u64,
    /// Failing runs' seeds, in the order they ran.
    pub failed: Vec<u64>,
    /// Operations, by how many retries they took (attempts minus one).
    pub retries: BTreeMap<u32, u64>,
    /// Operations that ended succeeded, rejected and unknown.
    pub succeeded: u64,
    /// See `succeeded`.
    pub rejected: u64,
    /// See `succeeded`.
    pub unknown: u64,
    /// Answers the clients got from the server's record (`Idempotent-Replayed`).
    pub replays: u64,
    /// Answers cut off after the server produced them.
    pub cut: u64,
    /// Effects made (payments).
    pub effects: u64,
}

impl Summary {
    /// Adds one run's figures.
    pub fn add(&mut self, run: &FinishedRun) {
        self.runs += 1;
        if run.finding.is_some() {
            self.failed.push(run.seed);
        }
        for entry in &run.entries {
            match &entry.event {
                HistoryEvent::Ended { attempts, how, .. } => {
                    *self.retries.entry(attempts.saturating_sub(1)).or_default() += 1;
                    match how {
                        Ended::Succeeded { .. } => self.succeeded += 1,
                        Ended::Rejected(_) => self.rejected += 1,
                        Ended::Unknown => self.unknown += 1,
                    }
                }
                HistoryEvent::Got {
                    reply: Reply::Answer { replayed: true, .. },
                    ..
                } => self.replays += 1,
                HistoryEvent::ReplyCut { .. } => self.cut += 1,
                HistoryEvent::Effect { .. } => self.effects += 1,
                _ => {}
            }
        }
    }

    /// Operations counted.
    pub fn operations(&self) -> u64 {
        self.succeeded + self.rejected + self.unknown
    }
}

/// The first seed of `seeds` whose run of `scenario` on `stack` fails, with its run.
pub fn first_failure<P: RetrySteps>(
    stack: &Stack<P>,
    scenario: SimScenario,
    seeds: Range<u64>,
) -> Option<FinishedRun> {
    seeds
        .map(|seed| run(stack, scenario, seed))
        .find(|run| run.finding.is_some())
}
