//! The Stage 3 check suite against this variant: the checks declared in Cargo.toml must fail.

retrykey_http_checks::http_suite!(
    retrykey_http_checks::Subject::correct()
        .with_engine(|builder| builder.engine(replay_5xx::Replay5xx))
);
