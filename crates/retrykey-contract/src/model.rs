//! A property test: random operation sequences against a ledger and a plain reference model.
//!
//! The model is the contract written as the simplest possible code (a map and a number, no
//! locks). Every reply and the final stored state of the ledger must equal the model's. A failure
//! shrinks to the shortest sequence that still breaks, which is printed as a small script.

use std::collections::BTreeMap;
use std::fmt;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestError, TestRng, TestRunner};
use retrykey::{Error, Key, Ledger, Limits, Receipt, Request};

/// Small limits, so that random sequences reach capacity and the ceiling often.
pub const MODEL_LIMITS: Limits = Limits {
    max_records: 3,
    max_units: 20,
};

/// Sequences tried per run. The seed is fixed, so every run tries the same sequences.
pub const CASES: u32 = 256;

const SEED: [u8; 32] = *b"retrykey lab: the reference mod.";
const KEYS: [&str; 5] = ["op-1", "op-2", "op-3", "op-4", "op-5"];
const JOBS: [&str; 2] = ["convert", "resize"];

/// One step of a random sequence.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Apply `units` of job `JOBS[job]` under key `KEYS[key]`.
    Apply {
        /// Index into the key pool.
        key: usize,
        /// Index into the job pool.
        job: usize,
        /// Units to reserve.
        units: u64,
    },
    /// Read the receipt of `KEYS[key]` without applying anything.
    Receipt {
        /// Index into the key pool.
        key: usize,
    },
}

impl fmt::Debug for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Step::Apply { key, job, units } => {
                write!(f, "apply {} {} {}", KEYS[key], JOBS[job], units)
            }
            Step::Receipt { key } => write!(f, "receipt {}", KEYS[key]),
        }
    }
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0..KEYS.len(), 0..JOBS.len(), 1..=9u64)
            .prop_map(|(key, job, units)| Step::Apply { key, job, units }),
        1 => (0..KEYS.len()).prop_map(|key| Step::Receipt { key }),
    ]
}

/// The contract as plain code: what every ledger must answer.
#[derive(Default)]
struct Reference {
    total: u64,
    records: BTreeMap<usize, (usize, u64, Receipt)>,
}

impl Reference {
    // ANCHOR: reference_apply
    fn apply(&mut self, key: usize, job: usize, units: u64) -> Result<Receipt, Error> {
        if let Some(&(old_job, old_units, receipt)) = self.records.get(&key) {
            return if (old_job, old_units) == (job, units) {
                Ok(receipt.replay())
            } else {
                Err(Error::Conflict)
            };
        }
        if self.records.len() >= MODEL_LIMITS.max_records {
            return Err(Error::Capacity {
                max_records: MODEL_LIMITS.max_records,
            });
        }
        if self.total + units > MODEL_LIMITS.max_units {
            return Err(Error::Ceiling {
                units,
                total: self.total,
                max_units: MODEL_LIMITS.max_units,
            });
        }
        self.total += units;
        let receipt = Receipt {
            operation: self.records.len() as u64 + 1,
            total: self.total,
            replayed: false,
        };
        self.records.insert(key, (job, units, receipt));
        Ok(receipt)
    }
    // ANCHOR_END: reference_apply
}

/// Runs `steps` against a fresh ledger and the model; the first difference is the error. A
/// hand-written script of steps is a scenario; the property test below draws them at random.
pub fn compare<L: Ledger>(make: &dyn Fn(Limits) -> L, steps: &[Step]) -> Result<(), String> {
    let ledger = make(MODEL_LIMITS);
    let mut model = Reference::default();
    let keys: Vec<Key> = KEYS
        .iter()
        .map(|k| Key::new(*k).expect("valid key"))
        .collect();

    for (n, step) in steps.iter().enumerate() {
        let (got, want) = match *step {
            Step::Apply { key, job, units } => {
                let request = Request::new(JOBS[job], units).expect("valid request");
                (
                    format!("{:?}", ledger.apply(&keys[key], &request)),
                    format!("{:?}", model.apply(key, job, units)),
                )
            }
            Step::Receipt { key } => (
                format!("{:?}", ledger.receipt(&keys[key])),
                format!("{:?}", Ok::<_, Error>(model.records.get(&key).map(|r| r.2))),
            ),
        };
        if got != want {
            return Err(format!(
                "step {} ({step:?}): ledger {got}, model {want}",
                n + 1
            ));
        }
    }
    let got = (ledger.total().ok(), ledger.records().ok());
    let want = (Some(model.total), Some(model.records.len()));
    if got != want {
        return Err(format!(
            "final (total, records): ledger {got:?}, model {want:?}"
        ));
    }
    Ok(())
}

/// Random sequences agree with the reference model, reply by reply and in the final state.
pub fn matches_reference_model<L: Ledger>(make: &dyn Fn(Limits) -> L) {
    let config = Config {
        cases: CASES,
        failure_persistence: None,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &SEED);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let sequences = proptest::collection::vec(step(), 1..24);

    let result = runner.run(&sequences, |steps| {
        compare(make, &steps).map_err(TestCaseError::fail)
    });
    match result {
        Ok(()) => {}
        Err(TestError::Fail(why, steps)) => {
            let script: Vec<String> = steps.iter().map(|s| format!("  {s:?}")).collect();
            panic!(
                "the ledger departs from the reference model.\nshrunk sequence:\n{}\n{why}",
                script.join("\n")
            );
        }
        Err(abort) => panic!("the property test could not run: {abort}"),
    }
}
