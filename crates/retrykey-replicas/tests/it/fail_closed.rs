//! A store that stops working refuses keyed requests before any work (503
//! `store-unavailable`), on both databases; PostgreSQL serves again once it is reachable.
//! The PostgreSQL test is ignored, not passed, when RETRYKEY_PG_URL is not set.

use std::sync::Arc;
use std::time::Duration;

use retrykey_http::payments::{PaymentLedger, Payments};
use retrykey_http::{Entries, IdempotencyLayer, PROBLEM_JSON};
use retrykey_replicas::{PgEntries, PgPayments, SqliteEntries, SqlitePayments, StoreOptions};
use retrykey_server::loopback::{LoopbackClient, LoopbackReply, Server};
use retrykey_testkit::proxy::{CommitCut, FaultProxy};
use retrykey_testkit::wait_until;
use tower_layer::Layer;

const PAY: &str = r#"{"amount":5}"#;

/// A throwaway PostgreSQL store reached through a fault proxy, and the same schema's store and
/// payments ledger seen directly, past the proxy.
async fn behind_proxy(lease: Duration) -> (FaultProxy, PgEntries, PgEntries, PgPayments) {
    let url = retrykey_durable_checks::admin::url();
    let proxy = FaultProxy::in_front_of(&url).expect("a proxy");
    let options = || StoreOptions::default().with_lease(lease);
    let store = PgEntries::throwaway(&proxy.url(&url), options())
        .await
        .expect("a store behind the proxy");
    let observer = PgEntries::connect_in_schema(&url, store.schema(), options())
        .await
        .expect("an observer");
    let observed = PgPayments::new(&observer);
    (proxy, store, observer, observed)
}

/// The payments service behind the layer, on 127.0.0.1.
async fn serve(store: impl Entries, ledger: Arc<dyn PaymentLedger>) -> (Server, Arc<Payments>) {
    let payments = Payments::with_ledger(Duration::ZERO, ledger);
    let layer = IdempotencyLayer::builder().store(store).build();
    let server = Server::start(layer.layer(payments.service()))
        .await
        .expect("a server on 127.0.0.1");
    (server, payments)
}

async fn pay(client: &LoopbackClient, key: &str) -> LoopbackReply {
    client
        .post("/payments", &[("idempotency-key", key)], PAY)
        .await
        .expect("an answer")
}

fn assert_store_unavailable(reply: &LoopbackReply) {
    assert_eq!(reply.status, 503, "{reply:?}");
    assert_eq!(
        reply.header("content-type"),
        Some(PROBLEM_JSON),
        "{reply:?}"
    );
    assert!(
        reply.body.contains("store-unavailable"),
        "not the store-unavailable problem: {}",
        reply.body
    );
}

// A SQLite store whose table is gone refuses a keyed POST with 503 and charges nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_store_that_fails_refuses_before_any_work() {
    let store = SqliteEntries::throwaway(StoreOptions::default()).expect("a SQLite store");
    let ledger = SqlitePayments::new(&store);
    let (server, payments) = serve(store.clone(), Arc::new(ledger.clone())).await;
    let client = LoopbackClient::new(server.url());
    assert_eq!(pay(&client, "k-before").await.status, 201);

    // Another connection to the same file breaks the store for real.
    let other = rusqlite::Connection::open(store.path()).expect("open the file");
    other
        .execute_batch("DROP TABLE http_keys")
        .expect("drop the keys table");

    let reply = pay(&client, "k-down").await;
    assert_store_unavailable(&reply);
    assert_eq!(payments.attempts(), 1, "the handler ran without a store");
    let charged: i64 = other
        .query_row("SELECT count(*) FROM payments", [], |row| row.get(0))
        .expect("count the payments");
    assert_eq!(charged, 1, "a charge was written without a store");
    assert_eq!(ledger.charges().await.expect("charges"), 1);
    server.stop().await;
}

// A PostgreSQL connection cut before its claim commits answers 503 and leaves no record and
// no charge; once the server is reachable again the same request runs, and charges once.
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_store_that_fails_refuses_before_any_work_and_recovers() {
    let (proxy, store, observer, observed) = behind_proxy(Duration::from_secs(2)).await;
    let (server, payments) = serve(store.clone(), Arc::new(PgPayments::new(&store))).await;
    let client = LoopbackClient::new(server.url());

    proxy.arm_where(CommitCut::BeforeCommit, "INSERT INTO http_keys");
    let reply = pay(&client, "k-1").await;
    assert_store_unavailable(&reply);
    assert_eq!(payments.attempts(), 0, "the handler ran without a store");
    assert_eq!(observed.charges().await.expect("charges"), 0);
    assert_eq!(observer.entries().await.expect("entries"), 0);

    let retry = pay(&client, "k-1").await;
    assert_eq!((retry.status, retry.replayed()), (201, false), "{retry:?}");
    let replay = pay(&client, "k-1").await;
    assert_eq!(
        (replay.status, replay.replayed()),
        (201, true),
        "{replay:?}"
    );
    assert_eq!(replay.body, retry.body);
    assert_eq!(payments.attempts(), 1);
    assert_eq!(observed.charges().await.expect("charges"), 1);
    assert_eq!(observer.entries().await.expect("entries"), 1);
    server.stop().await;
}

// While PostgreSQL is unreachable (every connection cut, new ones refused), keyed requests get
// 503 and the handler never runs; when it is back, the same request charges once.
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_outage_refuses_every_keyed_request_until_the_server_is_back() {
    let (proxy, store, observer, observed) = behind_proxy(Duration::from_secs(2)).await;
    let (server, payments) = serve(store.clone(), Arc::new(PgPayments::new(&store))).await;
    let client = LoopbackClient::new(server.url());
    assert_eq!(pay(&client, "k-before").await.status, 201);

    proxy.set_reachable(false);
    for key in ["k-1", "k-2", "k-before"] {
        assert_store_unavailable(&pay(&client, key).await);
    }
    assert_eq!(payments.attempts(), 1, "the handler ran without a store");
    assert_eq!(observed.charges().await.expect("charges"), 1);
    assert_eq!(observer.entries().await.expect("entries"), 1);

    proxy.set_reachable(true);
    let paid = pay(&client, "k-1").await;
    assert_eq!((paid.status, paid.replayed()), (201, false), "{paid:?}");
    let replay = pay(&client, "k-before").await;
    assert_eq!(
        (replay.status, replay.replayed()),
        (201, true),
        "{replay:?}"
    );
    assert_eq!(payments.attempts(), 2);
    assert_eq!(observed.charges().await.expect("charges"), 2);
    assert_eq!(observer.entries().await.expect("entries"), 2);
    server.stop().await;
}

// The reply to the charge's COMMIT is lost after the server committed: the service cannot know
// whether the charge happened, so it claims neither way (503 with Retry-After) and leaves the
// key's record as the commit left it. The retry reads that record: the committed 201, replayed,
// and the handler does not run again.
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_charge_whose_commit_reply_is_lost_is_settled_by_its_record() {
    let (proxy, store, observer, observed) = behind_proxy(Duration::from_secs(5)).await;
    // The charge waits a second after the claim, so the cut can be armed between the two.
    let payments = Payments::with_ledger(Duration::from_secs(1), Arc::new(PgPayments::new(&store)));
    let layer = IdempotencyLayer::builder().store(store.clone()).build();
    let server = Server::start(layer.layer(payments.service()))
        .await
        .expect("a server on 127.0.0.1");
    let client = LoopbackClient::new(server.url());

    let first = tokio::spawn({
        let client = client.clone();
        async move { pay(&client, "k-lost").await }
    });
    // The claim has committed once its record is visible past the proxy.
    wait_until("the claim is visible", Duration::from_secs(60), || async {
        observer.entries().await.expect("entries") > 0
    })
    .await;
    proxy.arm_where(CommitCut::AfterCommit, "INSERT INTO payments");
    let first = first.await.expect("the first attempt");
    assert_eq!(first.status, 503, "{first:?}");
    assert_eq!(first.header("retry-after"), Some("1"), "{first:?}");
    assert!(!proxy.is_armed(), "the charge's COMMIT was not the one cut");
    // The charge and the key's answer committed together, and nothing released the key.
    assert_eq!(observed.charges().await.expect("charges"), 1);
    assert_eq!(observer.entries().await.expect("entries"), 1);

    let retry = pay(&client, "k-lost").await;
    assert_eq!((retry.status, retry.replayed()), (201, true), "{retry:?}");
    assert!(retry.body.contains("\"payment\":"), "{retry:?}");
    assert_eq!(payments.attempts(), 1, "the handler ran twice for one key");
    assert_eq!(observed.charges().await.expect("charges"), 1);
    server.stop().await;
}

// The reply to a claim is lost after the server committed it: the first request gets 503 and
// the key's record stays in flight, owned by this process, with no attempt behind it. The
// retry recognises the claim as its own and releases it at once, so it is served without
// waiting for the lease (a minute long here, past the layer's wait): one charge, one answer.
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_claim_whose_reply_is_lost_is_released_by_its_own_process() {
    let (proxy, store, observer, observed) = behind_proxy(Duration::from_secs(60)).await;
    let (server, payments) = serve(store.clone(), Arc::new(PgPayments::new(&store))).await;
    let client = LoopbackClient::new(server.url());

    proxy.arm_where(CommitCut::AfterCommit, "INSERT INTO http_keys");
    let first = pay(&client, "k-claim").await;
    assert_store_unavailable(&first);
    assert!(!proxy.is_armed(), "the claim's commit was not the one cut");
    assert_eq!(payments.attempts(), 0, "the handler ran without a claim");
    assert_eq!(
        observer.entries().await.expect("entries"),
        1,
        "the claim committed"
    );

    let retry = pay(&client, "k-claim").await;
    assert_eq!((retry.status, retry.replayed()), (201, false), "{retry:?}");
    let replay = pay(&client, "k-claim").await;
    assert_eq!(
        (replay.status, replay.replayed(), &replay.body),
        (201, true, &retry.body)
    );
    assert_eq!(payments.attempts(), 1);
    assert_eq!(observed.charges().await.expect("charges"), 1);
    assert_eq!(observer.entries().await.expect("entries"), 1);
    server.stop().await;
}
