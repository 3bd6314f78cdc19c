//! The judge's own checks: the rules on histories made by hand, each kept or broken, both on
//! histories with the server's side (as the simulator records them) and on histories of what
//! clients saw alone (as a run against a real server records them).
//!
//! One test program for the whole package: one module per behaviour.

mod checker;
mod clients;
mod foreign;
