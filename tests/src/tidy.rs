//! Tidy: the architecture's rules, read from the manifests and the sources.

pub mod located;
