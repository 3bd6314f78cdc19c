//! The simulator's own checks: the correct stack keeps every rule over a seed budget, the
//! restart scenario finds the Stage 5 double charge by itself, and one seed replays byte for
//! byte. The rules on histories made by hand are `retrykey-history`'s tests.
//!
//! One test program for the whole package: one module per behaviour.

mod seeds;
