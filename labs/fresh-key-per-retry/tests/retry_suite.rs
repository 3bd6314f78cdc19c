//! The shared retry checks, run against the correct client with this variant's `executor.rs`.

retrykey_client_checks::variant_parts!(Variant, execute = fresh_key_per_retry::execute);

retrykey_client_checks::retry_suite!(Variant);
