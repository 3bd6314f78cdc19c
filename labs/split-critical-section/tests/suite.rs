//! The shared ledger contract, model and stress suites, run against this variant.

use split_critical_section::Store;

retrykey_contract::ledger_suite!(Store::with_limits);
