//! The servers the kit is run against, each on 127.0.0.1 with an OS-chosen port.

use std::sync::Arc;
use std::time::Duration;

use retrykey_conform::{Base, PAYMENTS_PROFILE, Profile};
use retrykey_http::payments::{Payments, is_payment};
use retrykey_http::{IdempotencyLayer, Scope};
use retrykey_replicas::{Opened, StoreChoice, StoreOptions};
use retrykey_server::loopback::Server;
use tower_layer::Layer;

/// The lab's profile, as the kit reads it.
pub fn lab_profile() -> Profile {
    Profile::parse(PAYMENTS_PROFILE).expect("the lab's profile is valid")
}

/// Store options as the lab's profile declares them: keys kept for 3 s.
pub fn options() -> StoreOptions {
    let mut options = StoreOptions::default();
    options.limits.retention = Duration::from_secs(3);
    options
}

/// A running server and its handler's state.
pub struct Served {
    pub server: Server,
    pub payments: Arc<Payments>,
}

impl Served {
    pub fn base(&self) -> Base {
        self.server.url().parse().expect("a loopback URL")
    }
}

/// `payments` behind the layer, as `payments --require-key --retention 3s` serves it.
pub async fn payments(opened: Opened) -> Served {
    let layer = IdempotencyLayer::builder()
        .shared_store(Arc::clone(&opened.store))
        .require_key(is_payment)
        .build();
    behind(layer, opened).await
}

/// `payments` on `opened`'s ledger, behind `layer`.
async fn behind(layer: IdempotencyLayer, opened: Opened) -> Served {
    let payments = Payments::with_ledger(Duration::from_millis(20), opened.ledger);
    let server = Server::start(layer.layer(payments.service()))
        .await
        .expect("a server");
    Served { server, payments }
}

/// `payments` behind a layer that keeps each path's keys apart, as a server does whose keyed
/// routes are its only ones: the same key on a path with no route gets the handler's 404.
pub async fn payments_keyed_per_path() -> Served {
    let opened = StoreChoice::Memory
        .open(options())
        .await
        .expect("the store opens");
    let layer = IdempotencyLayer::builder()
        .shared_store(Arc::clone(&opened.store))
        .require_key(is_payment)
        .scope(|parts| {
            let caller = format!("{:?}", Scope::from_bearer(parts));
            Scope::Caller(format!("{} {caller}", parts.uri.path()))
        })
        .build();
    behind(layer, opened).await
}

/// `payments` on `store`.
pub async fn payments_on(store: StoreChoice) -> Served {
    payments(store.open(options()).await.expect("the store opens")).await
}

/// The same handler with no idempotency layer at all.
pub async fn bare() -> Served {
    let payments = Payments::new(Duration::from_millis(20));
    let server = Server::start(payments.service()).await.expect("a server");
    Served { server, payments }
}
