//! The lab's payments server passes every check of the kit, on each store.

use retrykey_conform::{CHECKS, KitReport};
use retrykey_replicas::{Opened, PgEntries, PgPayments, StoreChoice};
use std::sync::Arc;

use crate::servers::{Served, lab_profile, options, payments, payments_on};

async fn kit_against(served: &Served) -> KitReport {
    retrykey_conform::run(&lab_profile(), &served.base(), &[])
        .await
        .expect("known checks")
}

/// Every check ran and passed; the server charged once per handler run that did not fail on
/// purpose (the one the 5xx check asks for), so no run was repeated behind a replay.
async fn assert_conforms(served: Served) {
    let report = kit_against(&served).await;
    assert_eq!(report.failed(), Vec::<&str>::new(), "{}", report.text());
    assert_eq!(report.skipped(), Vec::<&str>::new(), "{}", report.text());
    assert_eq!(report.passed().len(), CHECKS.len());
    let charges = served.payments.charges().await.expect("the charges");
    assert_eq!(charges, served.payments.attempts() - 1, "{}", report.text());
    served.server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn payments_in_memory_conforms() {
    assert_conforms(payments_on(StoreChoice::Memory).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn payments_on_sqlite_conforms() {
    let file = retrykey_testkit::ScratchFile::new("conform");
    assert_conforms(payments_on(StoreChoice::Sqlite(file.path().to_owned())).await).await;
}

#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn payments_on_postgres_conforms() {
    let url = retrykey_durable_checks::admin::url();
    let store = PgEntries::throwaway(&url, options())
        .await
        .expect("a throwaway schema");
    let opened = Opened {
        ledger: Arc::new(PgPayments::new(&store)),
        store: Arc::new(store),
    };
    assert_conforms(payments(opened).await).await;
}
