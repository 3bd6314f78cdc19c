//! Real PostgreSQL connections on this variant's ledger (see `retrykey_durable::connections`).

use check_then_insert::PgLedger;
use retrykey_durable::Options;

retrykey_durable::connections_suite!(|url: &str, options: Options| PgLedger::open(url, options));
