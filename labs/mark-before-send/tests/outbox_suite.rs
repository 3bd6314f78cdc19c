//! The Stage 5 outbox checks with this variant's delivery in every dispatcher: the checks
//! declared in Cargo.toml must fail.

retrykey_outbox_checks::outbox_suite!(retrykey_outbox_checks::Subject::correct().with_dispatcher(
    retrykey_outbox::dispatcher::Parts {
        deliver: mark_before_send::deliver,
    }
));
