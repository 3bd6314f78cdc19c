//! The variant `replay-5xx` under the shared checks: the ones its Cargo.toml declares must fail.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

// The Stage 4 check suite against this variant: the checks declared in Cargo.toml must fail.
retrykey_http_checks::http_suite!(
    retrykey_http_checks::LayerUnderTest::correct()
        .with_engine(|builder| builder.engine(replay_5xx::Replay5xx))
);

// The simulator's suite against this variant: it must break a rule within its seeds.
retrykey_sim::sim_suite!(
    retrykey_sim::Stack::correct().with_engine(|builder| builder.engine(replay_5xx::Replay5xx))
);
