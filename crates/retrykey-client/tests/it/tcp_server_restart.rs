//! Over loopback TCP: the service restarts between attempts and the retry still finds the record.

use crate::common;

use std::sync::Arc;

use retrykey::{Request, Store};
use retrykey_client::tcp::{Faults, LedgerServer, TcpAdapter};
use retrykey_client::{Client, Policy};
use retrykey_contract::fixtures::stored;
use tokio::sync::Mutex;

// The first attempt commits and loses its reply; the service restarts on the same port in
// front of the same ledger; the retry gets the original receipt.
#[tokio::test]
async fn restart_between_attempts_keeps_the_record() {
    let store = Arc::new(Store::new());
    let server = common::service(&store).await;
    let addr = server.local_addr();
    server.faults().drop_next_replies(1);
    let slot = Mutex::new(Some(server));
    let restarts = Mutex::new(0);

    let ledger = TcpAdapter::new(addr);
    let request = Request::new("convert-document", 7).unwrap();
    let client = Client::builder(Policy::default()).seed(3).build();
    let outcome = client
        .run(|attempt| {
            let (slot, restarts, ledger, request, store) =
                (&slot, &restarts, &ledger, &request, &store);
            async move {
                if attempt.number == 2 {
                    let mut slot = slot.lock().await;
                    slot.take().expect("the first service").shutdown().await;
                    let restarted =
                        LedgerServer::start(addr, store.clone(), Faults::default()).await;
                    *slot = Some(restarted.expect("the port is free again"));
                    *restarts.lock().await += 1;
                }
                ledger.apply(attempt, request).await
            }
        })
        .await;

    assert_eq!(*restarts.lock().await, 1);
    let (value, replayed, attempts) = common::expect_succeeded(outcome);
    assert_eq!(
        (value.operation, value.total, replayed, attempts),
        (1, 7, true, 2)
    );
    assert_eq!(stored(&*store), (7, 1));
}
