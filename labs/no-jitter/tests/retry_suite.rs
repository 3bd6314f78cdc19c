//! The shared retry checks, run against the correct client with this variant's `backoff.rs`.

retrykey_client::variant_parts!(Variant, delay = no_jitter::full_jitter);

retrykey_client::retry_suite!(Variant);
