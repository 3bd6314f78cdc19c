//! The HTTP adapter against a scripted loopback server: the key header, Retry-After, replays.

use crate::common;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use retrykey_client::adapters::{HttpAdapter, KEY_HEADER};
use retrykey_client::{Client, Outcome, Policy};
use retrykey_http::IdempotencyKey;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What the scripted server saw: each request's head, and when it arrived.
type Seen = Arc<Mutex<Vec<(String, Instant)>>>;

/// A server that answers its requests with `responses`, in order, one per connection.
async fn scripted(responses: Vec<&'static str>) -> (SocketAddr, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen: Seen = Arc::default();
    let log = Arc::clone(&seen);
    tokio::spawn(async move {
        for response in responses {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let mut request = Vec::new();
            let mut buf = [0u8; 1024];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = stream.read(&mut buf).await.unwrap();
                if n == 0 {
                    break;
                }
                request.extend_from_slice(&buf[..n]);
            }
            log.lock().unwrap().push((
                String::from_utf8_lossy(&request).into_owned(),
                Instant::now(),
            ));
            stream.write_all(response.as_bytes()).await.unwrap();
            stream.shutdown().await.ok();
        }
    });
    (addr, seen)
}

fn key_header(head: &str) -> Option<&str> {
    head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case(KEY_HEADER).then(|| value.trim())
    })
}

const BUSY: &str = "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
const CREATED_REPLAY: &str = "HTTP/1.1 201 Created\r\nIdempotent-Replayed: true\r\nContent-Length: 9\r\nConnection: close\r\n\r\n{\"op\":1}\n";

// A 503 with Retry-After is retried after the asked wait, under the same key, and a replayed
// 201 is reported as a success delivered from the record.
#[tokio::test]
async fn retry_after_then_replay() {
    let (addr, seen) = scripted(vec![BUSY, CREATED_REPLAY]).await;
    let http = HttpAdapter::new();
    let url = format!("http://{addr}/jobs");
    let client = Client::builder(Policy::default()).seed(10).build();
    let key = client.new_key();
    let outcome = client
        .run_with_key(key.clone(), |a| {
            http.post(a, &url, "application/json", b"{\"units\":7}".to_vec())
        })
        .await;
    let (value, replayed, attempts) = common::expect_succeeded(outcome);
    assert_eq!((value.status, replayed, attempts), (201, true, 2));
    assert_eq!(value.body, b"{\"op\":1}\n");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    for (head, _) in seen.iter() {
        // A UUID that starts with a digit is not a token, so it may travel quoted: what must
        // hold is that the layer reads the operation key back.
        let sent = key_header(head).expect("every attempt carries the key header");
        let read = IdempotencyKey::parse(sent.as_bytes()).expect("the layer reads the header");
        assert_eq!(
            read.as_str(),
            key.as_str(),
            "every attempt carries the operation key"
        );
    }
    assert!(
        seen[1].1 - seen[0].1 >= Duration::from_secs(1),
        "the asked wait was not honoured"
    );
}

// A 422 is definitive: one request, rejected, with the server's explanation.
#[tokio::test]
async fn unprocessable_is_rejected_once() {
    let invalid = "HTTP/1.1 422 Unprocessable Content\r\nContent-Length: 10\r\nConnection: close\r\n\r\nbad units\n";
    let (addr, seen) = scripted(vec![invalid, CREATED_REPLAY]).await;
    let http = HttpAdapter::new();
    let url = format!("http://{addr}/jobs");
    let client = Client::builder(Policy::default()).seed(11).build();
    let outcome = client
        .run(|a| http.post(a, &url, "application/json", b"{}".to_vec()))
        .await;
    let Outcome::Rejected { failure, attempts } = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(
        (failure.status, failure.detail.as_str(), attempts),
        (422, "bad units\n", 1)
    );
    assert_eq!(seen.lock().unwrap().len(), 1);
}

// A 409 that says when to come back means "still in progress": it is retried.
#[tokio::test]
async fn conflict_in_progress_is_retried() {
    let in_progress =
        "HTTP/1.1 409 Conflict\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    let ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
    let (addr, _) = scripted(vec![in_progress, ok]).await;
    let http = HttpAdapter::new();
    let url = format!("http://{addr}/jobs");
    let client = Client::builder(Policy::default()).seed(12).build();
    let outcome = client
        .run(|a| http.post(a, &url, "text/plain", Vec::new()))
        .await;
    let (value, replayed, attempts) = common::expect_succeeded(outcome);
    assert_eq!((value.status, replayed, attempts), (200, false, 2));
}

// Nothing listening: every attempt is refused, so nothing can have been applied.
#[tokio::test]
async fn refused_connections_are_not_applied() {
    let addr = common::free_port();
    let http = HttpAdapter::new();
    let url = format!("http://{addr}/jobs");
    let policy = Policy::builder()
        .base(Duration::from_millis(5))
        .cap(Duration::from_millis(10))
        .build()
        .unwrap();
    let client = Client::builder(policy).seed(13).build();
    let outcome = client
        .run(|a| http.post(a, &url, "text/plain", Vec::new()))
        .await;
    common::assert_all_refused(&outcome);
}
