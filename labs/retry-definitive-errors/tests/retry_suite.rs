//! The shared retry checks, run against the correct client with this variant's `classify.rs`.

retrykey_client_checks::variant_parts!(Variant, classify = retry_definitive_errors::classify);

retrykey_client_checks::retry_suite!(Variant);
