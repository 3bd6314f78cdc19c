//! The Stage 3 check suite against this variant: the checks declared in Cargo.toml must fail.

retrykey_http_checks::http_suite!(
    retrykey_http_checks::Subject::correct().with_store(|limits| std::sync::Arc::new(
        split_check_insert::SplitCheckInsert::new(limits)
    ))
);
