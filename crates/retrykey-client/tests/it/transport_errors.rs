//! A transport failure keeps what broke as a typed `TransportError`, reachable by matching and
//! as the failure's error source.

use crate::common;

use std::error::Error as _;
use std::io;
use std::sync::Arc;

use retrykey::{Request, Store};
use retrykey_client::adapters::{HttpAdapter, MemoryAdapter};
use retrykey_client::tcp::TcpAdapter;
use retrykey_client::{Client, Failure, Outcome, Policy, TransportError};

/// The last failure of an operation that must have ended unknown.
fn last_failure<T: std::fmt::Debug>(outcome: Outcome<T>) -> Failure {
    match outcome {
        Outcome::Unknown { last, .. } => last,
        other => panic!("expected an unknown outcome, got {other:?}"),
    }
}

// A TCP connect to a closed port is Refused with the socket's error, whose kind a caller reads.
#[tokio::test]
async fn tcp_refusal_keeps_the_socket_error() {
    let ledger = TcpAdapter::new(common::free_port());
    let request = Request::new("convert-document", 1).unwrap();
    let client = Client::builder(Policy::default().single_attempt())
        .seed(61)
        .build();
    let failure = last_failure(client.run(|a| ledger.apply(a, &request)).await);
    let Failure::Refused(TransportError::Io(error)) = &failure else {
        panic!("{failure:?}")
    };
    assert_eq!(error.kind(), io::ErrorKind::ConnectionRefused);
    // The chain reaches the operating system's error: failure -> transport error -> io::Error.
    let cause = failure
        .source()
        .and_then(|e| e.source())
        .expect("a source chain");
    assert!(cause.downcast_ref::<io::Error>().is_some(), "{cause:?}");
}

// A reply the TCP service never wrote is Lost with Closed: the request left, its fate unknown.
#[tokio::test]
async fn tcp_closed_before_reply_is_lost_closed() {
    let store = Arc::new(Store::new());
    let server = common::service(&store).await;
    server.faults().drop_next_replies(1);
    let ledger = TcpAdapter::new(server.local_addr());
    let request = Request::new("convert-document", 1).unwrap();
    let client = Client::builder(Policy::default().single_attempt())
        .seed(62)
        .build();
    let failure = last_failure(client.run(|a| ledger.apply(a, &request)).await);
    assert_eq!(failure, Failure::Lost(TransportError::Closed));
    assert_eq!(
        failure.to_string(),
        "connection lost after sending (connection closed before the reply)"
    );
}

// The in-memory fault switch reports its lost reply as ReplyDropped.
#[tokio::test]
async fn memory_lost_reply_is_reply_dropped() {
    let ledger = MemoryAdapter::new(Arc::new(Store::new()));
    ledger.lose_next_replies(1);
    let request = Request::new("convert-document", 1).unwrap();
    let client = Client::builder(Policy::default().single_attempt())
        .seed(63)
        .build();
    let failure = last_failure(client.run(|a| ledger.apply(a, &request)).await);
    assert_eq!(failure, Failure::Lost(TransportError::ReplyDropped));
}

// An HTTP connect to a closed port is Refused with reqwest's error, which says it was a connect.
#[tokio::test]
async fn http_refusal_keeps_the_client_error() {
    let http = HttpAdapter::new();
    let url = format!("http://{}/jobs", common::free_port());
    let client = Client::builder(Policy::default().single_attempt())
        .seed(64)
        .build();
    let failure = last_failure(
        client
            .run(|a| http.post(a, &url, "text/plain", Vec::new()))
            .await,
    );
    let Failure::Refused(TransportError::Http(error)) = &failure else {
        panic!("{failure:?}")
    };
    assert!(error.is_connect(), "{error:?}");
}
