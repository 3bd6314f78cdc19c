//! The Stage 5 outbox checks with this variant's accept in the document service: the checks
//! declared in Cargo.toml must fail.

retrykey_outbox_checks::outbox_suite!(retrykey_outbox_checks::Subject::correct().with_documents(
    retrykey_outbox::sqlite::Parts {
        accept: publish_outside_transaction::accept,
    }
));
