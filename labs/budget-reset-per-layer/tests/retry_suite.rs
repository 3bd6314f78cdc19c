//! The shared retry checks, run against the correct client with this variant's `nesting.rs`.

retrykey_client_checks::variant_parts!(
    Variant,
    child_budget = budget_reset_per_layer::child_budget
);

retrykey_client_checks::retry_suite!(Variant);
