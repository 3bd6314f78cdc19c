//! The scenarios the simulator runs: stage 8's, on the payments service, and stage 9's
//! `foreign`, on the checkout and the provider it calls mid-request.

use std::fmt;
use std::str::FromStr;

use retrykey_sim::SimScenario;

/// A scenario the simulator runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SimulatorScenario {
    /// One of stage 8's, on the payments service.
    Payments(SimScenario),
    /// Stage 9's: the checkout, and the provider it calls mid-request.
    Foreign,
}

impl SimulatorScenario {
    /// Every scenario, in the order the simulator lists them.
    pub const ALL: [SimulatorScenario; 4] = [
        SimulatorScenario::Payments(SimScenario::LostReply),
        SimulatorScenario::Payments(SimScenario::Restart),
        SimulatorScenario::Payments(SimScenario::RestartSurviving),
        SimulatorScenario::Foreign,
    ];

    /// The scenario's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            SimulatorScenario::Payments(scenario) => scenario.name(),
            SimulatorScenario::Foreign => retrykey_foreign::sim::SCENARIO,
        }
    }
}

impl fmt::Display for SimulatorScenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A scenario name the simulator does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no scenario named {0:?} ({list})", list = SimulatorScenario::ALL.map(SimulatorScenario::name).join(", "))]
pub struct NoSuchScenario(pub String);

impl FromStr for SimulatorScenario {
    type Err = NoSuchScenario;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        SimulatorScenario::ALL
            .into_iter()
            .find(|scenario| scenario.name() == name)
            .ok_or_else(|| NoSuchScenario(name.to_owned()))
    }
}
