//! The shared retry checks, run against the correct client.

use retrykey_client::Standard;

retrykey_client::retry_suite!(Standard);
