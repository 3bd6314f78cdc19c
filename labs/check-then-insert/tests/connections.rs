//! Real PostgreSQL connections on this variant's ledger (see `retrykey_durable_checks::connections`).

use check_then_insert::PgLedger;
use retrykey_durable::Options;

retrykey_durable_checks::connections_suite!(|url: &str, options: Options| PgLedger::open(
    url, options
));
