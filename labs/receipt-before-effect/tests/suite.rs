//! The shared ledger contract, model and stress suites, run against this variant.

use receipt_before_effect::Store;

retrykey_contract::ledger_suite!(Store::with_limits);
