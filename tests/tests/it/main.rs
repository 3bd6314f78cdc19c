//! The integration tests of `retrykey-tests`: the workspace checks.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

mod blanks;
mod book_facts;
mod book_rules;
mod conformed;
mod diagrams;
mod exercise;
mod help;
mod negatives_runner;
mod piece_texts;
mod progress;
mod simulated;
mod stage1_negatives;
mod stage3_negatives;
mod stage4_negatives;
mod stage5_negatives;
mod stage6_negatives;
mod stage7_negatives;
mod stage9_negatives;
mod tidy;
mod walkthrough;
