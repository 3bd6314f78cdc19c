//! The kit's HTTP/1.1 reading against servers scripted byte for byte: a chunked answer on a
//! connection the server keeps open, a bodiless status, an answer too large, and silence.

use std::time::{Duration, Instant};

use retrykey_conform::wire::{self, Base, MAX_ANSWER_BYTES, WireError, WireRequest};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A server that reads one request head, writes `answer`, and holds the connection open.
async fn scripted(answer: Vec<u8>) -> Base {
    scripted_then(answer, Duration::from_secs(30)).await
}

/// A server that reads one request head, writes `answer`, and closes the connection after `held`.
async fn scripted_then(answer: Vec<u8>, held: Duration) -> Base {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let base = format!("http://{}", listener.local_addr().expect("an address"));
    tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.expect("a client");
        let mut head = [0u8; 4096];
        let _ = stream.read(&mut head).await;
        let _ = stream.write_all(&answer).await;
        tokio::time::sleep(held).await;
    });
    base.parse().expect("a base")
}

fn post() -> WireRequest {
    WireRequest {
        method: "POST".to_owned(),
        path: "/payments".to_owned(),
        headers: vec![("Idempotency-Key".to_owned(), "\"k\"".to_owned())],
        body: "{}".to_owned(),
        from: None,
    }
}

const LIMIT: Duration = Duration::from_secs(5);

#[tokio::test]
async fn a_chunked_answer_ends_at_its_last_chunk_not_at_close() {
    let base = scripted(
        b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\nIdempotent-Replayed: true\r\n\r\n\
          5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n"
            .to_vec(),
    )
    .await;
    let started = Instant::now();
    let answer = wire::exchange(&base, &post(), LIMIT)
        .await
        .expect("an answer");
    assert_eq!((answer.status, answer.body.as_str()), (201, "hello world"));
    assert_eq!(answer.header("IDEMPOTENT-REPLAYED"), Some("true"));
    assert!(
        started.elapsed() < LIMIT,
        "read to the last chunk, not to the timeout"
    );
}

#[tokio::test]
async fn a_bodiless_status_needs_no_length() {
    let base = scripted(b"HTTP/1.1 204 No Content\r\nX-Seen: 1\r\n\r\n".to_vec()).await;
    let answer = wire::exchange(&base, &post(), LIMIT)
        .await
        .expect("an answer");
    assert_eq!((answer.status, answer.body.as_str()), (204, ""));
}

#[tokio::test]
async fn an_answer_past_the_limit_is_refused() {
    let mut answer = format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n",
        2 * MAX_ANSWER_BYTES
    )
    .into_bytes();
    answer.extend(std::iter::repeat_n(b'x', 2 * MAX_ANSWER_BYTES));
    let base = scripted(answer).await;
    let refused = wire::exchange(&base, &post(), LIMIT).await;
    assert!(
        matches!(refused, Err(WireError::TooLarge(MAX_ANSWER_BYTES))),
        "{refused:?}"
    );
}

#[tokio::test]
async fn silence_ends_at_the_limit() {
    let base = scripted(Vec::new()).await;
    let limit = Duration::from_millis(200);
    let silent = wire::exchange(&base, &post(), limit).await;
    assert!(
        matches!(silent, Err(WireError::TimedOut(200))),
        "{silent:?}"
    );
}

// The request goes out as written: the key header raw, twice if asked, and the base's path first.
#[test]
fn a_request_is_written_byte_for_byte() {
    let base: Base = "http://127.0.0.1:9/api".parse().expect("a base");
    let mut request = post();
    request
        .headers
        .push(("Idempotency-Key".to_owned(), "a b".to_owned()));
    let text = String::from_utf8(request.to_bytes(&base)).expect("text");
    assert!(
        text.starts_with("POST /api/payments HTTP/1.1\r\nhost: 127.0.0.1:9\r\n"),
        "{text}"
    );
    assert!(
        text.contains("Idempotency-Key: \"k\"\r\nIdempotency-Key: a b\r\n\r\n{}"),
        "{text}"
    );
}

#[tokio::test]
async fn an_interim_answer_is_passed_over() {
    let base = scripted(
        b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok"
            .to_vec(),
    )
    .await;
    let answer = wire::exchange(&base, &post(), LIMIT)
        .await
        .expect("an answer");
    assert_eq!((answer.status, answer.body.as_str()), (201, "ok"));
}

#[tokio::test]
async fn a_length_past_any_buffer_is_refused_not_added() {
    let base =
        scripted(b"HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551615\r\n\r\nx".to_vec())
            .await;
    let refused = wire::exchange(&base, &post(), LIMIT).await;
    assert!(
        matches!(refused, Err(WireError::TooLarge(_))),
        "{refused:?}"
    );
}

// HTTP/1.0 without a length: the body ends where the server closes the connection.
#[tokio::test]
async fn a_body_without_framing_ends_at_close() {
    let answer = b"HTTP/1.0 200 OK\r\nIdempotent-Replayed: TRUE\r\n\r\n{\"payment\":7}";
    let base = scripted_then(answer.to_vec(), Duration::ZERO).await;
    let answer = wire::exchange(&base, &post(), LIMIT)
        .await
        .expect("an answer");
    assert_eq!(
        (answer.status, answer.body.as_str()),
        (200, "{\"payment\":7}")
    );
}

#[test]
fn an_ipv6_base_is_bracketed_on_the_wire() {
    let base: Base = "http://[::1]:8080/v1".parse().expect("a base");
    assert_eq!(
        (base.host.as_str(), base.port, base.to_string().as_str()),
        ("::1", 8080, "http://[::1]:8080/v1")
    );
    let text = String::from_utf8(post().to_bytes(&base)).expect("text");
    assert!(text.contains("\r\nhost: [::1]:8080\r\n"), "{text}");
}
