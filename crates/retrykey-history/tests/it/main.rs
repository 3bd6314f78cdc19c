//! The judge's own checks: the rules on histories made by hand, each kept or broken.
//!
//! One test program for the whole package: one module per behaviour.

mod checker;
