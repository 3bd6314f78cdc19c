//! The Stage 5 replica checks with this variant's claim in every replica's store: the checks
//! declared in Cargo.toml must fail.

retrykey_replicas_checks::replicas_suite!(retrykey_replicas_checks::Subject::correct().with_parts(
    retrykey_replicas::Parts {
        claim: no_lease::claim,
        ..retrykey_replicas::Parts::standard()
    }
));
