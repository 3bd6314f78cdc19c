//! The checkout on PostgreSQL: the same phases, the same rows, in the key's schema. The shared
//! suite runs on SQLite; these hold the PostgreSQL books to the same end states.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::SeqCst;
use std::time::Duration;

use retrykey_foreign::checkout::CHECKOUTS;
use retrykey_foreign::crash::{Hooks, Point};
use retrykey_foreign::provider::{ChargeFault, Provider};
use retrykey_foreign::{Checkout, Completed, PgBooks, ProviderCall};
use retrykey_replicas::{PgEntries, SqliteEntries, StoreOptions};
use retrykey_server::loopback::{LoopbackClient, Server};

fn url() -> String {
    std::env::var("RETRYKEY_PG_URL").expect("RETRYKEY_PG_URL names the test server")
}

/// A provider, and a checkout whose keys and rows are in a fresh PostgreSQL schema.
struct Rig {
    provider: Provider,
    provider_server: Server,
    checkout: Arc<Checkout>,
    client: LoopbackClient,
    server: Server,
}

impl Rig {
    async fn start(hooks: Hooks) -> Self {
        let provider_store = SqliteEntries::throwaway(StoreOptions::default()).expect("a store");
        let provider = Provider::open(provider_store).await.expect("the provider");
        let provider_server = Server::start(provider.clone().service())
            .await
            .expect("a server");
        let store = PgEntries::throwaway(&url(), StoreOptions::default())
            .await
            .expect("a fresh schema");
        let books = PgBooks::open(store, hooks.clone())
            .await
            .expect("the books");
        let checkout = Checkout::new(books, ProviderCall::to(provider_server.url()));
        let checkout = Arc::new(checkout.with_hooks(hooks));
        let server = Server::start(Arc::clone(&checkout).service())
            .await
            .expect("a server");
        Self {
            provider,
            provider_server,
            checkout,
            client: LoopbackClient::new(server.url()),
            server,
        }
    }

    async fn post(&self, key: &str) -> (u16, bool) {
        let body = r#"{"amount":700}"#;
        let reply = (self
            .client
            .post(CHECKOUTS, &[("idempotency-key", key)], body)
            .await)
            .expect("the checkout answers");
        (reply.status, reply.replayed())
    }

    /// The provider's charges, and each order's status and shipments.
    async fn state(&self) -> (usize, Vec<(String, i64)>) {
        let charges = self.provider.charges().await.expect("the charges").len();
        let orders = self.checkout.books().orders().await.expect("the orders");
        let orders = orders
            .into_iter()
            .map(|o| (o.status, o.shipments))
            .collect();
        (charges, orders)
    }

    async fn stop(self) {
        self.server.stop().await;
        self.provider_server.stop().await;
    }
}

fn paid_once() -> (usize, Vec<(String, i64)>) {
    (1, vec![("paid".to_owned(), 1)])
}

// A crash at each point, then the client's retry: one charge, one order paid and shipped once.
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_at_every_point_ends_once_on_postgres() {
    for point in Point::ALL {
        let crashed = Arc::new(AtomicBool::new(false));
        let once = Arc::clone(&crashed);
        let rig = Rig::start(Hooks::with(move |at| {
            if at == point && !once.swap(true, SeqCst) {
                panic!("the checkout crashes at {at}");
            }
        }))
        .await;
        assert_ne!(rig.post("cart-pg").await.0, 201, "{point}");
        assert!(crashed.load(SeqCst), "{point}: never reached");
        let retry = rig.post("cart-pg").await;
        assert_eq!(retry, (201, point == Point::Confirmed), "{point}");
        assert_eq!(rig.state().await, paid_once(), "{point}");
        rig.stop().await;
    }
}

// A client that left at `order_created`: the completer finishes it once the charge is known,
// and the late retry replays the completer's answer.
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_completer_finishes_on_postgres() {
    let rig = Rig::start(Hooks::none()).await;
    rig.provider.faults().push(ChargeFault::ErrorBefore, 100);
    assert_eq!(rig.post("cart-left-pg").await.0, 503);
    rig.provider.faults().clear();
    let run = rig.checkout.complete(Duration::ZERO, 10).await;
    let finished = Completed {
        finished: 1,
        ..Completed::default()
    };
    assert_eq!(run.expect("a run"), finished);
    assert_eq!(rig.post("cart-left-pg").await, (201, true));
    assert_eq!(rig.state().await, paid_once());
    assert_eq!(rig.checkout.reap(Duration::ZERO, 10).await.ok(), Some(1));
    rig.stop().await;
}
