//! The exercise under the value-type checks: `just check-exercise` runs them in teaching order.
//!
//! The key is the copy's; the request is the core's, and its check shows what the oracle
//! expects of a second value type.

retrykey_contract::values_suite!(key = key_rules::Key, request = retrykey::Request);
