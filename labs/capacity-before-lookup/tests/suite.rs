//! The shared ledger contract, model and stress suites, run against this variant.

use capacity_before_lookup::Store;

retrykey_contract::ledger_suite!(Store::with_limits);
