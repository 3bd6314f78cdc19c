//! The client's integration tests, one module per behaviour, built as one test program.

mod key_grammar;
