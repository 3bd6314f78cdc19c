//! The hardship of one run, drawn from its seed before the run starts.
//!
//! Everything random in a run comes from the seed: this plan (latencies, faults and when they
//! strike, each client's patience), the server's choices (which replies to cut, when the
//! handler fails), the clients' jitter and keys, and turmoil's own network draws.

use std::time::Duration;

use rand::{RngExt, SeedableRng};

/// The generator every draw of the simulator uses: the client's own, so seeds mean one thing.
pub type SimRng = retrykey_client::JitterRng;

/// A generator for one purpose (`stream`) of one run (`seed`): independent streams, so adding
/// a draw to one part of the simulator does not shift every other part.
pub fn rng(seed: u64, stream: u64) -> SimRng {
    SimRng::seed_from_u64(seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// A fault the driver applies between a client and the server, or to the server host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlannedFault {
    /// Messages both ways are dropped for `lasting`.
    Partition {
        /// The client host's number.
        client: u32,
        /// How long.
        lasting: Duration,
    },
    /// Messages both ways are held back for `lasting`, then delivered.
    Hold {
        /// The client host's number.
        client: u32,
        /// How long.
        lasting: Duration,
    },
    /// The server host crashes, and starts again after `down_for`.
    Restart {
        /// How long it stays down.
        down_for: Duration,
    },
}

/// The run's hardship.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Shortest and longest one-way message latency.
    pub latency: (Duration, Duration),
    /// Chance that the server's answer is cut off after the request arrived.
    pub reply_loss: f64,
    /// Chance that a handler run fails with a 503 before its effect.
    pub handler_failure: f64,
    /// Longest work a handler does before its effect (each run draws up to it).
    pub max_work: Duration,
    /// How long each client waits for one answer before it gives up and disconnects.
    pub patience: Vec<Duration>,
    /// Faults, each with the moment it strikes.
    pub faults: Vec<(Duration, PlannedFault)>,
}

impl Plan {
    /// Draws the plan for `seed`: `clients` client hosts, with a server restart when `restart`.
    pub fn draw(seed: u64, clients: u32, restart: bool) -> Self {
        let mut rng = rng(seed, 1);
        let ms = |rng: &mut SimRng, low: u64, high: u64| {
            Duration::from_millis(rng.random_range(low..=high))
        };
        let low = ms(&mut rng, 1, 5);
        let latency = (low, low + ms(&mut rng, 0, 40));
        let reply_loss = rng.random_range(0.0..0.3);
        let handler_failure = rng.random_range(0.0..0.2);
        let max_work = ms(&mut rng, 0, 150);
        let patience = (0..clients).map(|_| ms(&mut rng, 60, 400)).collect();
        let mut faults = Vec::new();
        for _ in 0..rng.random_range(0..=3u32) {
            let at = ms(&mut rng, 0, 1_500);
            let client = rng.random_range(1..=clients);
            let lasting = ms(&mut rng, 50, 1_200);
            let fault = if rng.random_bool(0.5) {
                PlannedFault::Partition { client, lasting }
            } else {
                PlannedFault::Hold { client, lasting }
            };
            faults.push((at, fault));
        }
        if restart {
            let at = ms(&mut rng, 20, 1_200);
            let down_for = ms(&mut rng, 20, 400);
            faults.push((at, PlannedFault::Restart { down_for }));
        }
        faults.sort_by_key(|(at, _)| *at);
        Plan {
            latency,
            reply_loss,
            handler_failure,
            max_work,
            patience,
            faults,
        }
    }
}
