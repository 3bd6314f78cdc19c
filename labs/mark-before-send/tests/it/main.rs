//! The variant `mark-before-send` under the shared checks: the ones its Cargo.toml declares must fail.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

// The Stage 7 outbox checks with this variant's delivery in every dispatcher: the checks
// declared in Cargo.toml must fail.
retrykey_outbox_checks::outbox_suite!(retrykey_outbox_checks::Subject::correct().with_dispatcher(
    retrykey_outbox::dispatcher::DeliverySteps {
        deliver: mark_before_send::deliver,
    }
));
