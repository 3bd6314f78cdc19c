//! Real PostgreSQL connections: concurrent writers, conflicts, rollbacks, and connections lost
//! around COMMIT (see `retrykey_durable_checks::connections`).

use retrykey_durable::{LedgerOptions, PgLedger};

retrykey_durable_checks::connections_suite!(|url: &str, options: LedgerOptions| PgLedger::open(
    url, options
));
