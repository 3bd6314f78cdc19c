//! What a check starts and reads back: a provider and a checkout on their own files and
//! loopback sockets, the checkout built from the subject's steps and books.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use retrykey_foreign::checkout::{CHECKOUTS, Steps};
use retrykey_foreign::crash::Hooks;
use retrykey_foreign::provider::{Charge, Provider};
use retrykey_foreign::{BooksError, Checkout, Order, ProviderCall, SqliteBooks};
use retrykey_program::Clock;
use retrykey_replicas::{Lease, SqliteEntries, StoreOptions};
use retrykey_server::loopback::{LoopbackClient, LoopbackReply, Server};

/// How a subject opens its books in a store and builds its checkout on them.
pub type OpenBooks = fn(
    SqliteEntries,
    Hooks,
    ProviderCall,
) -> Pin<Box<dyn Future<Output = Result<Checkout, BooksError>> + Send>>;

/// What the checks run: the checkout's steps and how it keeps its rows.
#[derive(Clone, Copy)]
pub struct ForeignUnderTest {
    /// The derived key, the phases and the completer's claim.
    pub steps: &'static dyn Steps,
    /// The books on SQLite (`retrykey-foreign`'s `sqlite.rs`).
    pub books: OpenBooks,
}

impl ForeignUnderTest {
    /// The correct crate.
    pub fn correct() -> Self {
        Self {
            steps: &retrykey_foreign::checkout::Standard,
            books: standard_books,
        }
    }

    /// The same, with a lab's steps.
    pub fn with_steps(self, steps: &'static dyn Steps) -> Self {
        Self { steps, ..self }
    }

    /// The same, with a lab's books.
    pub fn with_books(self, books: OpenBooks) -> Self {
        Self { books, ..self }
    }
}

fn standard_books(
    store: SqliteEntries,
    hooks: Hooks,
    call: ProviderCall,
) -> Pin<Box<dyn Future<Output = Result<Checkout, BooksError>> + Send>> {
    Box::pin(async move {
        let books = SqliteBooks::open(store, hooks.clone()).await?;
        Ok(Checkout::new(books, call).with_hooks(hooks))
    })
}

/// Every key's lease: one second, so that a check waits little for a takeover.
pub(crate) const LEASE: Duration = Duration::from_secs(1);

/// A provider and a checkout, each on its own throwaway file and socket.
pub(crate) struct CheckoutRig {
    pub(crate) provider: Provider,
    provider_server: Server,
    client: LoopbackClient,
    server: Server,
    /// The checkout itself, for its completer and reaper.
    pub(crate) checkout: Arc<Checkout>,
    store: SqliteEntries,
    subject: ForeignUnderTest,
}

impl CheckoutRig {
    /// A rig whose checkout runs `hooks` at its crash points.
    pub(crate) async fn start(subject: &ForeignUnderTest, hooks: Hooks) -> Self {
        let provider_store = SqliteEntries::throwaway(StoreOptions::default()).expect("a store");
        let provider = Provider::open(provider_store).await.expect("the provider");
        let provider_server = Server::start(provider.clone().service())
            .await
            .expect("a server");
        let store = SqliteEntries::throwaway(options(Clock::system())).expect("a store");
        let call = ProviderCall::to(provider_server.url());
        let checkout = (subject.books)(store.clone(), hooks, call)
            .await
            .expect("the checkout")
            .with_steps(subject.steps);
        let checkout = Arc::new(checkout);
        let server = Server::start(Arc::clone(&checkout).service())
            .await
            .expect("a server");
        Self {
            provider,
            provider_server,
            client: LoopbackClient::new(server.url()),
            server,
            checkout,
            store,
            subject: *subject,
        }
    }

    /// A second replica on the same file, its clock `ahead` of this one's (past the lease).
    pub(crate) async fn replica(&self, ahead: Duration) -> (LoopbackClient, Server) {
        let store = SqliteEntries::open(self.store.path(), options(Clock::ahead(ahead)))
            .expect("the same file");
        let call = ProviderCall::to(self.provider_server.url());
        let checkout = (self.subject.books)(store, Hooks::none(), call)
            .await
            .expect("the second replica")
            .with_steps(self.subject.steps);
        let server = Server::start(Arc::new(checkout).service())
            .await
            .expect("a server");
        (LoopbackClient::new(server.url()), server)
    }

    /// A client of this rig's checkout.
    pub(crate) fn client(&self) -> LoopbackClient {
        self.client.clone()
    }

    /// One `POST /checkouts` under `key`: its status, whether it was a replay, its body.
    pub(crate) async fn post(&self, key: &str, amount: i64) -> (u16, bool, String) {
        let reply = post(&self.client, key, amount).await;
        (reply.status, reply.replayed(), reply.body)
    }

    /// Every charge the provider made.
    pub(crate) async fn charges(&self) -> Vec<Charge> {
        self.provider.charges().await.expect("the charges")
    }

    /// Every order the checkout holds.
    pub(crate) async fn orders(&self) -> Vec<Order> {
        self.checkout.books().orders().await.expect("the orders")
    }

    pub(crate) async fn stop(self) {
        self.server.stop().await;
        self.provider_server.stop().await;
        drop(self.store);
    }
}

/// One `POST /checkouts` through `client`.
pub(crate) async fn post(client: &LoopbackClient, key: &str, amount: i64) -> LoopbackReply {
    let body = format!(r#"{{"amount":{amount}}}"#);
    client
        .post(CHECKOUTS, &[("idempotency-key", key)], body)
        .await
        .expect("the checkout answers")
}

/// The store's options: the short lease, read on `clock`.
fn options(clock: Clock) -> StoreOptions {
    StoreOptions {
        lease: Lease {
            duration: LEASE,
            ..Lease::default()
        },
        clock,
        ..StoreOptions::default()
    }
}

/// Runs one check on its own runtime, bounded so that a hang fails instead of blocking forever.
pub(crate) fn run<Fut: Future<Output = ()>>(check: impl FnOnce() -> Fut) {
    retrykey_testkit::run_check_within(Duration::from_secs(60), check());
}
