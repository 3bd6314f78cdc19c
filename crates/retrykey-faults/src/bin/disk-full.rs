//! `just disk-full`: to come in this change.

fn main() {}
