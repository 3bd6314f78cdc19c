//! The `payments` server against clients that stall: a thousand unfinished heads, a body that
//! never arrives, a kept-alive connection that says nothing, more connections than the cap.
//! Each is cut off by its own limit while ordinary keyed payments go on, exactly once each.

use std::time::{Duration, Instant};

use crate::support::Replica;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const HEAD: &[u8] =
    b"POST /payments HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n";

/// Reads until the server closes the connection (bounded); returns what it sent, and when the
/// close came.
async fn read_to_close(stream: &mut TcpStream, within: Duration) -> (Vec<u8>, Instant) {
    let mut received = Vec::new();
    let mut chunk = [0_u8; 4096];
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut chunk)).await {
            Ok(Ok(0) | Err(_)) => return (received, Instant::now()),
            Ok(Ok(n)) => received.extend_from_slice(&chunk[..n]),
            Err(_elapsed) => panic!("the server kept the connection open for {within:?}"),
        }
    }
}

// A thousand connections that each sent part of a head are all closed within the header timeout
// of their first byte, while fifty keyed payments (each sent twice) succeed and charge once each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_unfinished_heads_are_closed_while_payments_go_on() {
    const STALLED: usize = 1_000;
    const HEADER_TIMEOUT: Duration = Duration::from_secs(2);
    // The next limit that could close a stalled head: whatever closes one sooner is the header
    // timeout, however late a busy machine lets it run.
    const IDLE_TIMEOUT: Duration = Duration::from_secs(30);
    let server = Replica::start(&[
        "--header-timeout",
        "2s",
        "--idle-timeout",
        "30s",
        "--work-ms",
        "0",
    ]);
    // One watcher per stalled connection, timed from before its connection is opened (the
    // server's clock for it cannot start sooner): each notes when its own close arrives, so a
    // close is timed when it happens, not when a loop over a thousand connections gets round
    // to reading it.
    let mut watchers = Vec::with_capacity(STALLED);
    for n in 0..STALLED {
        let sent = Instant::now();
        let mut stream = TcpStream::connect(server.addr())
            .await
            .expect("a connection");
        stream.write_all(HEAD).await.expect("part of a head");
        stream
            .write_all(format!("idempotency-key: stalled-{n}\r\n").as_bytes())
            .await
            .expect("part of a head");
        let watcher = tokio::spawn(async move {
            let (received, closed) = read_to_close(&mut stream, IDLE_TIMEOUT * 2).await;
            (received, closed - sent)
        });
        watchers.push((watcher, sent));
    }

    for n in 0..50 {
        let key = format!("pay-{n}");
        let first = server.pay(&key, r#"{"amount":5}"#).await;
        let retry = server.pay(&key, r#"{"amount":5}"#).await;
        assert_eq!((first.status, retry.status), (201, 201), "{}", first.body);
        assert!(!first.replayed() && retry.replayed());
        assert_eq!(first.body, retry.body, "the retry got the first answer");
    }

    // The heads were held while the payments went on: the newest is still open now.
    let (newest, sent) = watchers.last().expect("a stalled connection");
    if sent.elapsed() < HEADER_TIMEOUT - Duration::from_millis(500) {
        assert!(
            !newest.is_finished(),
            "a stalled head was closed before its timeout"
        );
    }
    // Each is closed by its timeout: not before it, and before any other limit could.
    let (mut earliest, mut latest) = (Duration::MAX, Duration::ZERO);
    for (watcher, _) in watchers {
        let (received, after) = watcher.await.expect("the watcher ran to the close");
        assert!(received.is_empty(), "an unfinished head got an answer");
        earliest = earliest.min(after);
        latest = latest.max(after);
    }
    assert!(
        earliest >= HEADER_TIMEOUT,
        "a stalled connection was closed {earliest:?} after it was opened, before the timeout"
    );
    assert!(
        latest < IDLE_TIMEOUT,
        "the last stalled connection was closed {latest:?} after it was opened: not by the \
         header timeout"
    );
    assert_eq!(
        server.counts().await,
        (50, 50),
        "one charge and one handler run per key, none for a stalled head"
    );
}

// A body that stops short is answered 408 body-timed-out when the body timeout passes, and its
// key is not taken: the same key with the whole body then charges, as a first attempt.
#[tokio::test]
async fn a_body_that_does_not_arrive_gets_408_and_takes_no_key() {
    let server = Replica::start(&["--body-timeout", "1s", "--work-ms", "0"]);
    let mut stream = TcpStream::connect(server.addr())
        .await
        .expect("a connection");
    stream.write_all(HEAD).await.unwrap();
    stream
        .write_all(b"idempotency-key: slow-body\r\ncontent-length: 12\r\n\r\n{\"amo")
        .await
        .unwrap();
    let (received, _) = read_to_close(&mut stream, Duration::from_secs(60)).await;
    let answer = String::from_utf8_lossy(&received);
    assert!(answer.starts_with("HTTP/1.1 408 "), "{answer}");
    assert!(answer.contains("application/problem+json"), "{answer}");
    assert!(answer.contains("problem:body-timed-out"), "{answer}");
    assert_eq!(
        server.counts().await,
        (0, 0),
        "nothing ran, nothing charged"
    );

    let whole = server.pay("slow-body", r#"{"amount":5}"#).await;
    assert_eq!(whole.status, 201, "{}", whole.body);
    assert!(!whole.replayed(), "the key was free: a first attempt");
    assert_eq!(server.counts().await, (1, 1));
}

// A kept-alive connection with nothing more to say is closed after the idle timeout, which is
// its own limit: here much shorter than the header timeout.
#[tokio::test]
async fn a_quiet_kept_alive_connection_is_closed_after_the_idle_timeout() {
    const HEADER_TIMEOUT: Duration = Duration::from_secs(30);
    let server = Replica::start(&["--idle-timeout", "1s", "--header-timeout", "30s"]);
    let mut stream = TcpStream::connect(server.addr())
        .await
        .expect("a connection");
    // Timed from before the request: the quiet time cannot start before its answer is out.
    let started = Instant::now();
    stream
        .write_all(b"GET /payments/count HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let (received, closed) = read_to_close(&mut stream, HEADER_TIMEOUT * 2).await;
    let answer = String::from_utf8_lossy(&received);
    assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");
    let quiet = closed - started;
    assert!(
        quiet >= Duration::from_millis(900),
        "closed after {quiet:?}: kept alive for the idle timeout first"
    );
    assert!(
        quiet < HEADER_TIMEOUT,
        "closed after {quiet:?}: the idle timeout, not the header timeout"
    );
}

// With the cap reached, one more connection gets 503 too-many-connections with Retry-After and
// runs nothing; once a slot is free, the same payment goes through.
#[tokio::test]
async fn a_connection_over_the_cap_gets_503_and_runs_nothing() {
    let server = Replica::start(&["--max-connections", "3", "--work-ms", "0"]);
    // Each held connection is answered once and kept alive: once its answer is back, the
    // server has taken it and counts it, however slowly it got round to it.
    let mut held = Vec::new();
    for _ in 0..3 {
        let mut stream = TcpStream::connect(server.addr())
            .await
            .expect("a connection");
        stream
            .write_all(b"GET /payments/count HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
            .await
            .unwrap();
        let mut answer = [0_u8; 512];
        let n = stream.read(&mut answer).await.expect("an answer");
        assert!(
            answer[..n].starts_with(b"HTTP/1.1 200 "),
            "{}",
            String::from_utf8_lossy(&answer[..n])
        );
        held.push(stream);
    }
    let refused = server.pay("capped", r#"{"amount":5}"#).await;
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(
        refused.header("content-type"),
        Some("application/problem+json")
    );
    assert!(
        refused.body.contains("problem:too-many-connections"),
        "{}",
        refused.body
    );

    drop(held);
    let deadline = Instant::now() + Duration::from_secs(60);
    let paid = loop {
        let reply = server.pay("capped", r#"{"amount":5}"#).await;
        if reply.status != 503 || Instant::now() > deadline {
            break reply;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(paid.status, 201, "{}", paid.body);
    assert!(!paid.replayed(), "the refusal took no key");
    assert_eq!(server.counts().await, (1, 1));
}
