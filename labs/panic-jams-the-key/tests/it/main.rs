//! The variant `panic-jams-the-key` under the shared checks: the ones its Cargo.toml declares must fail.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

// The Stage 4 check suite against this variant: the checks declared in Cargo.toml must fail.
retrykey_http_checks::http_suite!(
    retrykey_http_checks::LayerUnderTest::correct()
        .with_engine(|builder| builder.engine(panic_jams_the_key::PanicJamsTheKey))
);
