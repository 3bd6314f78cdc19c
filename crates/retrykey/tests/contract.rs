//! The in-memory store passes the whole ledger contract.

use retrykey::Store;

retrykey_contract::contract_suite!(Store::with_limits);
retrykey_contract::model_suite!(Store::with_limits);
