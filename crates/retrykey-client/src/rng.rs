//! The random generator the client draws its waits (and, when seeded, its keys) from.

/// The random generator behind jitter (and behind keys, when the client is seeded).
///
/// Xoshiro256++ is fast and its output for a given seed is fixed, so seeded runs repeat exactly.
pub type JitterRng = rand::rngs::Xoshiro256PlusPlus;
