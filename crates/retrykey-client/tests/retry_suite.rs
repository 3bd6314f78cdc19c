//! The shared retry checks, run against the correct client.

use retrykey_client::StandardParts;

retrykey_client_checks::retry_suite!(StandardParts);
