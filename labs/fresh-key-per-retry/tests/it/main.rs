//! The variant `fresh-key-per-retry` under the shared checks: the ones its Cargo.toml declares must fail.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

// The shared retry checks, run against the correct client with this variant's `executor.rs`.
retrykey_client_checks::variant_steps!(Variant, execute = fresh_key_per_retry::execute);

retrykey_client_checks::retry_suite!(Variant);

// The simulator's suite against this variant: it must break a rule within its seeds.
retrykey_sim::sim_suite!(retrykey_sim::Stack::correct().with_steps::<Variant>());
