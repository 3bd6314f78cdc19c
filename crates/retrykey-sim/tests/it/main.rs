//! The simulator's own checks: the correct stack keeps every rule over a seed budget, the
//! restart scenario finds the Stage 5 double charge by itself, one seed replays byte for byte,
//! and the checker names each rule's breach in a history made by hand.
//!
//! One test program for the whole package: one module per behaviour.

mod checker;
mod seeds;
