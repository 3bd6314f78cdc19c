// Cargo resolves a crate's build-dependencies only when it has a build script; the empty one
// lets the manifest unify the features of the proc-macro crates too.
fn main() {}
