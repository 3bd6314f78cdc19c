//! The Stage 4 check suite, unchanged, against the SQLite store: every check must pass.

use std::sync::Arc;

use retrykey_replicas::{SqliteEntries, StoreOptions};

retrykey_http_checks::http_suite!(retrykey_http_checks::LayerUnderTest::correct().with_store(
    |limits| {
        Arc::new(
            SqliteEntries::throwaway(StoreOptions {
                limits,
                ..StoreOptions::default()
            })
            .expect("a SQLite store in the temporary folder"),
        )
    }
));
