//! Over loopback TCP: a `BUSY` answer's wait is honoured, and one past the budget stops early.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use retrykey::{Request, Store};
use retrykey_client::tcp::TcpAdapter;
use retrykey_client::{Client, Outcome, Policy, Stop};
use retrykey_contract::fixtures::stored;

// The service answers "busy, come back in 1 s": the next attempt waits at least that long,
// and the busy answer applied nothing.
#[tokio::test]
async fn busy_wait_is_honoured() {
    let store = Arc::new(Store::new());
    let server = common::service(&store).await;
    server.faults().busy_next(1, 1);
    let ledger = TcpAdapter::new(server.local_addr());
    let request = Request::new("convert-document", 7).unwrap();
    let client = Client::builder(Policy::default()).seed(6).build();
    let starts = Mutex::new(Vec::new());
    let outcome = client
        .run(|a| {
            starts.lock().unwrap().push(Instant::now());
            ledger.apply(a, &request)
        })
        .await;
    let (value, replayed, attempts) = common::expect_succeeded(outcome);
    assert_eq!(
        (value.operation, value.total, replayed, attempts),
        (1, 7, false, 2)
    );
    let starts = starts.into_inner().unwrap();
    assert!(
        starts[1] - starts[0] >= Duration::from_secs(1),
        "the retry came before the asked wait"
    );
    assert_eq!(stored(&*store), (7, 1));
}

// A wait longer than the budget left ends the operation after one attempt, as unknown, with
// nothing applied.
#[tokio::test]
async fn busy_wait_past_the_budget_stops_early() {
    let store = Arc::new(Store::new());
    let server = common::service(&store).await;
    server.faults().busy_next(1, 60);
    let ledger = TcpAdapter::new(server.local_addr());
    let request = Request::new("convert-document", 7).unwrap();
    let client = Client::builder(Policy::default()).seed(7).build();
    let outcome = client.run(|a| ledger.apply(a, &request)).await;
    assert!(
        matches!(
            outcome,
            Outcome::Unknown {
                attempts: 1,
                stop: Stop::RetryAfterPastBudget,
                ..
            }
        ),
        "{outcome:?}"
    );
    assert_eq!(stored(&*store), (0, 0));
}
