//! No code: this crate's manifest turns on, for every build, the union of the features the
//! workspace's members ask of their third-party crates (see its `Cargo.toml`).
