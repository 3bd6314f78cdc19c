//! Over loopback TCP: refused connections are retried, and all-refused means nothing happened.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use retrykey::{Request, Store};
use retrykey_client::tcp::{Faults, LedgerServer, TcpAdapter};
use retrykey_client::{Client, Policy};
use retrykey_contract::fixtures::stored;
use tokio::sync::Mutex;

fn policy() -> Policy {
    Policy::builder()
        .base(Duration::from_millis(10))
        .cap(Duration::from_millis(20))
        .build()
        .unwrap()
}

// Two refused connections, then the service comes up: the third attempt applies the effect.
#[tokio::test]
async fn refused_then_recovered() {
    let addr = common::free_port();
    let store = Arc::new(Store::new());
    let slot: Mutex<Option<LedgerServer>> = Mutex::new(None);
    let ledger = TcpAdapter::new(addr);
    let request = Request::new("convert-document", 7).unwrap();
    let client = Client::builder(policy()).seed(4).build();
    let outcome = client
        .run(|attempt| {
            let (slot, ledger, request, store) = (&slot, &ledger, &request, &store);
            async move {
                if attempt.number == 3 {
                    let server = LedgerServer::start(addr, store.clone(), Faults::default()).await;
                    *slot.lock().await = Some(server.expect("the port is free"));
                }
                ledger.apply(attempt, request).await
            }
        })
        .await;
    let (value, replayed, attempts) = common::expect_succeeded(outcome);
    assert_eq!(
        (value.operation, value.total, replayed, attempts),
        (1, 7, false, 3)
    );
    assert_eq!(stored(&*store), (7, 1));
}

// When every attempt is refused, the outcome is unknown but provably not applied.
#[tokio::test]
async fn all_refused_is_unknown_but_not_applied() {
    let ledger = TcpAdapter::new(common::free_port());
    let request = Request::new("convert-document", 7).unwrap();
    let client = Client::builder(policy()).seed(5).build();
    let outcome = client.run(|a| ledger.apply(a, &request)).await;
    common::assert_all_refused(&outcome);
}
