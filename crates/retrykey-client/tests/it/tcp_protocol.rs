//! The line protocol: bad lines and conflicts are refused by name and change nothing.

use crate::common;

use std::net::SocketAddr;
use std::sync::Arc;

use retrykey::{Ledger, Request, Store};
use retrykey_client::tcp::TcpAdapter;
use retrykey_client::tcp::protocol::parse_reply;
use retrykey_client::{Client, Failure, Outcome, Policy};
use retrykey_contract::fixtures::stored;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// Sends raw bytes and returns the reply line, or `None` if the service closed the connection.
async fn exchange(addr: SocketAddr, raw: &[u8]) -> Option<String> {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(raw).await.unwrap();
    let mut reply = String::new();
    let read = BufReader::new(stream).read_line(&mut reply).await.ok()?;
    (read > 0).then_some(reply)
}

// Malformed lines and invalid requests are answered INVALID with the reason; nothing is applied.
#[tokio::test]
async fn bad_lines_are_refused_and_change_nothing() {
    let store = Arc::new(Store::new());
    let server = common::service(&store).await;
    let addr = server.local_addr();
    let cases: [(&[u8], &str); 4] = [
        (
            b"HELLO\n",
            "INVALID\texpected APPLY<tab>key<tab>job<tab>units\n",
        ),
        (
            b"APPLY\top-1\tconvert-document\t-7\n",
            "INVALID\tinvalid request: units must be a positive whole number, not negative\n",
        ),
        (
            b"APPLY\top-1\tconvert-document\tseven\n",
            "INVALID\tinvalid request: units must be a positive whole number\n",
        ),
        (
            b"APPLY\t\tconvert-document\t7\n",
            "INVALID\tinvalid operation key: it is empty\n",
        ),
    ];
    for (line, expected) in cases {
        assert_eq!(exchange(addr, line).await.as_deref(), Some(expected));
    }
    let long = format!("APPLY\top-1\t{}\t7\n", "j".repeat(2_000));
    assert_eq!(
        exchange(addr, long.as_bytes()).await,
        None,
        "an over-long line closes the connection"
    );
    assert_eq!(stored(&*store), (0, 0));
}

// The same key with a different request is a definitive conflict: one attempt, nothing changed.
#[tokio::test]
async fn conflict_is_rejected_once() {
    let store = Arc::new(Store::new());
    let server = common::service(&store).await;
    let ledger = TcpAdapter::new(server.local_addr());
    let client = Client::builder(Policy::default()).seed(9).build();
    let key = client.new_key();
    let first = Request::new("convert-document", 7).unwrap();
    let applied = client
        .run_with_key(key.clone(), |a| ledger.apply(a, &first))
        .await;
    assert_eq!(applied.kind(), "succeeded");

    let changed = Request::new("convert-document", 8).unwrap();
    let outcome = client
        .run_with_key(key.clone(), |a| ledger.apply(a, &changed))
        .await;
    let Outcome::Rejected { failure, attempts } = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!((failure.status, attempts), (409, 1));
    assert_eq!(stored(&*store), (7, 1));
    assert_eq!(store.receipt(&key).unwrap().map(|r| r.total), Some(7));
}

// A reply the client cannot read is treated as lost: the request may have taken effect.
#[test]
fn unreadable_replies_are_lost_not_failed() {
    for line in [
        "",
        "OK\t1\t7",
        "OK\tone\t7\t0",
        "OK\t1\t7\t2",
        "BUSY\tsoon",
        "WHAT\tever",
    ] {
        assert!(
            matches!(parse_reply(line), Err(Failure::Lost(_))),
            "{line:?}"
        );
    }
    let busy = parse_reply("BUSY\t2").unwrap_err();
    assert!(matches!(busy, Failure::Status(ref a) if a.status == 503 && a.retry_after.is_some()));
}
