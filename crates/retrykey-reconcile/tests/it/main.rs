//! The integration tests of `retrykey-reconcile`.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour.

mod program;
mod report;
