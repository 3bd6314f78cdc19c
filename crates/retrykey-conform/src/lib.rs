//! A conformance kit for any `Idempotency-Key` server: the draft's rules and the lab's, checked
//! over real HTTP, with a minimal witness for each failure.
//!
//! Point it at a running server and a [`Profile`] that describes it (its route, its body, its
//! replay marker, what a duplicate gets ...). Each check sends real requests on their own TCP
//! connections, written byte for byte, and judges what came back twice: by its own
//! expectations (a 422 here, a replay there, the effect count), and by the history rules the
//! simulator judges its runs with (`retrykey-history`), over the keyed exchanges it recorded.
//! A check that fails is run again at smaller sizes, and its witness is the few exchanges of
//! the smallest failing run that show the broken rule.
//!
//! # Reading order
//!
//! 1. `profile.rs`: what the kit must be told about a server, and the checks it leaves out
//!    without it.
//! 2. `checks/`: the checks, grouped by what they send (`same_key.rs`, `keys.rs`, `runs.rs`,
//!    `load.rs`), with the expectations they share in `assert.rs`; `mod.rs` lists them in order.
//! 3. `session.rs`: one check's run: its operations and every exchange, recorded.
//! 4. `judge.rs`: that record as a history, judged by the shared rules.
//! 5. `run.rs`: each check run, judged, and shrunk when it fails, after `calibrate.rs` proved
//!    the profile's hooks it relies on; `witness.rs`, `report.rs`.
//! 6. `chaos.rs`: random operations under faults, judged by the same rules, through the fault
//!    proxy of `proxy.rs`.
//! 7. `wire.rs`: HTTP/1.1 written and read by hand, and `bin/conform.rs`, the program.
//!
//! # Example
//!
//! ```
//! use retrykey_conform::{CHECKS, Profile};
//!
//! let profile = Profile::parse(r#"
//!     [request]
//!     path = "/orders"
//!     content_type = "application/json"
//!     body = '{"item": {n}}'
//!
//!     [replay]
//!     header = "Idempotent-Replayed"
//!     value = "true"
//! "#)?;
//! assert_eq!(profile.body(7), r#"{"item": 7}"#);
//! // Without a caller header the kit cannot tell callers apart: that check is skipped, and says why.
//! let callers = CHECKS.iter().find(|c| c.name == "callers-are-kept-apart").unwrap();
//! assert_eq!((callers.skipped)(&profile).as_deref(), Some("the profile declares no caller header"));
//! # Ok::<(), retrykey_conform::ProfileError>(())
//! ```

mod calibrate;
pub mod chaos;
mod checks;
mod judge;
pub mod profile;
pub mod proxy;
mod report;
mod run;
mod session;
pub mod wire;
mod witness;

pub use calibrate::Hook;
pub use chaos::{ChaosFailure, ChaosReport, chaos};
pub use checks::{CHECKS, KitCheck, Source};
pub use judge::history;
pub use profile::{Profile, ProfileError};
pub use report::{CheckReport, CheckVerdict, FailedCheck, KitReport, NOT_JUDGED};
pub use run::{KitError, refuted, run, unlike};
pub use session::{Ending, Exchange, Operation};
pub use wire::{Base, BaseError};
pub use witness::{MAX_WITNESS, WitnessLine};

/// The lab's own profile: the `payments` server as chapter 4 starts it.
pub const PAYMENTS_PROFILE: &str = include_str!("../profiles/payments.toml");

/// A profile for a server unlike the lab's, to start one's own from (`conform --init`).
pub const EXAMPLE_PROFILE: &str = include_str!("../profiles/orders-example.toml");
