//! The shared retry checks, run against the correct client with this variant's `backoff.rs`.

retrykey_client_checks::variant_parts!(Variant, delay = no_jitter::full_jitter);

retrykey_client_checks::retry_suite!(Variant);
