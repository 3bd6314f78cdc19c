//! The variant `lease-without-fence` under the shared checks: the ones its Cargo.toml declares must fail.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

// The Stage 6 replica checks with this variant's fence in every replica's store: the checks
// declared in Cargo.toml must fail.
retrykey_replicas_checks::replicas_suite!(
    retrykey_replicas_checks::ReplicasUnderTest::correct().with_steps(
        retrykey_replicas_checks::VariantFence {
            holds: lease_without_fence::holds,
            finish: lease_without_fence::finish,
            renew: lease_without_fence::renew,
        }
    )
);
