//! The Stage 5 replica checks with this variant's fence in every replica's store: the checks
//! declared in Cargo.toml must fail.

retrykey_replicas_checks::replicas_suite!(retrykey_replicas_checks::Subject::correct().with_parts(
    retrykey_replicas::Parts {
        holds: lease_without_fence::holds,
        finish: lease_without_fence::finish,
        renew: lease_without_fence::renew,
        ..retrykey_replicas::Parts::standard()
    }
));
