//! The shared retry checks, run against the correct client.

use retrykey_client::Standard;

retrykey_client_checks::retry_suite!(Standard);
