//! Over loopback TCP: a reply lost after the commit becomes a replay, never a second effect.

use crate::common;

use std::sync::Arc;

use retrykey::{Ledger, Request, Store};
use retrykey_client::tcp::TcpAdapter;
use retrykey_client::{Client, Failure, Outcome, Policy, Stop};
use retrykey_contract::fixtures::stored;

// A one-attempt caller whose reply is lost reports unknown; the service has committed; the
// retry under the kept key gets the original receipt and the effect stays single.
#[tokio::test]
async fn unknown_then_retry_with_the_kept_key() {
    let store = Arc::new(Store::new());
    let server = common::service(&store).await;
    let ledger = TcpAdapter::new(server.local_addr());
    let request = Request::new("convert-document", 7).unwrap();
    let client = Client::builder(Policy::default().single_attempt())
        .seed(1)
        .build();
    let key = client.new_key();

    server.faults().drop_next_replies(1);
    let first = client
        .run_with_key(key.clone(), |a| ledger.apply(a, &request))
        .await;
    assert!(
        matches!(
            &first,
            Outcome::Unknown {
                last: Failure::Lost(_),
                attempts: 1,
                stop: Stop::AttemptsExhausted,
                may_have_applied: true
            }
        ),
        "{first:?}"
    );
    assert_eq!(stored(&*store), (7, 1), "the attempt did commit");

    let retry = client
        .run_with_key(key.clone(), |a| ledger.apply(a, &request))
        .await;
    let (value, replayed, attempts) = common::expect_succeeded(retry);
    assert!(replayed);
    assert_eq!((value.operation, value.total, attempts), (1, 7, 1));
    assert_eq!(stored(&*store), (7, 1), "one effect");
    assert_eq!(store.receipt(&key).unwrap().map(|r| r.operation), Some(1));
}

// The executor's own retry after the lost reply is answered from the record.
#[tokio::test]
async fn the_executor_turns_a_lost_reply_into_a_replay() {
    let store = Arc::new(Store::new());
    let server = common::service(&store).await;
    let ledger = TcpAdapter::new(server.local_addr());
    let request = Request::new("convert-document", 7).unwrap();
    let client = Client::builder(Policy::default()).seed(2).build();

    server.faults().drop_next_replies(1);
    let outcome = client.run(|a| ledger.apply(a, &request)).await;
    let (value, replayed, attempts) = common::expect_succeeded(outcome);
    assert_eq!(
        (value.operation, value.total, replayed, attempts),
        (1, 7, true, 2)
    );
    assert_eq!(stored(&*store), (7, 1));
}
