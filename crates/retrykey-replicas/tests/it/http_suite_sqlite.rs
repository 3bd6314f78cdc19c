//! The Stage 4 check suite, unchanged, against the SQLite store: every check must pass.

use std::sync::Arc;

use retrykey_replicas::{Options, SqliteEntries};

retrykey_http_checks::http_suite!(
    retrykey_http_checks::Subject::correct().with_store(|limits| {
        Arc::new(
            SqliteEntries::throwaway(Options {
                limits,
                ..Options::default()
            })
            .expect("a SQLite store in the temporary folder"),
        )
    })
);
