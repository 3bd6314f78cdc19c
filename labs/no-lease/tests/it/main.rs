//! The variant `no-lease` under the shared checks: the ones its Cargo.toml declares must fail.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

// The Stage 6 replica checks with this variant's claim in every replica's store: the checks
// declared in Cargo.toml must fail.
retrykey_replicas_checks::replicas_suite!(
    retrykey_replicas_checks::ReplicasUnderTest::correct()
        .with_steps(retrykey_replicas_checks::VariantClaim(no_lease::claim))
);
