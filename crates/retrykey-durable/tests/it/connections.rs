//! Real PostgreSQL connections: concurrent writers, conflicts, rollbacks, and connections lost
//! around COMMIT (see `retrykey_durable_checks::connections`).

use retrykey_durable::{Options, PgLedger};

retrykey_durable_checks::connections_suite!(|url: &str, options: Options| PgLedger::open(
    url, options
));
