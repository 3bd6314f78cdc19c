//! The Stage 4 check suite, unchanged, against the PostgreSQL store (each store in a fresh
//! schema): every check must pass. Ignored, not passed, when RETRYKEY_PG_URL is not set.

use std::sync::Arc;

use retrykey_durable_checks::admin::url;
use retrykey_replicas::{PgEntries, StoreOptions};
use tokio::runtime::Handle;

retrykey_http_checks::http_suite!(
    #[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
    retrykey_http_checks::LayerUnderTest::correct().with_store(|limits| {
        // The subject's constructor is synchronous and runs inside the check's runtime.
        let options = StoreOptions {
            limits,
            ..StoreOptions::default()
        };
        let store = tokio::task::block_in_place(|| {
            Handle::current().block_on(PgEntries::throwaway(&url(), options))
        });
        Arc::new(store.expect("a PostgreSQL store in a fresh schema"))
    })
);
