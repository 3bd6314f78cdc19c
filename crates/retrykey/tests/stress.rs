//! 64 threads released together on one key, repeated: `STRESS_ROUNDS` rounds (default 3).

use retrykey::Store;

retrykey_contract::stress_suite!(Store::with_limits);
