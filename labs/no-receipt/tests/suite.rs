//! The shared ledger contract, model and stress suites, run against this variant.

use no_receipt::Store;

retrykey_contract::ledger_suite!(Store::with_limits);
