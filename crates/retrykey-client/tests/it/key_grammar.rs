//! One key grammar end to end: every key the client accepts either reaches the layer as exactly
//! that key, or is refused by the client before any request; two keys never become one.
//!
//! `PROPTEST_CASES` sets how many cases each property tries (256 by default).

use std::time::Duration;

use proptest::prelude::*;
use retrykey::{Error as KeyError, Key, KeyProblem, MAX_KEY_BYTES};
use retrykey_client::adapters::{HttpAdapter, HttpResponse, KEY_HEADER, KeyHeader};
use retrykey_client::{Client, Error, Failure, Outcome, Policy};
use retrykey_http::payments::Payments;
use retrykey_http::{EntryId, IdempotencyKey, IdempotencyLayer, MAX_KEY_CHARS, Scope};
use retrykey_server::loopback::Server;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tower_layer::Layer;

fn config() -> ProptestConfig {
    ProptestConfig {
        // A failure is reported with its smallest input; nothing is written into the source tree.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Keys a caller might pass: any Unicode at all, and strings built from the characters the
/// header treats specially (quotes, backslashes, spaces, commas, semicolons), non-ASCII,
/// control characters and token characters, from empty to past the longest key.
fn any_key() -> impl Strategy<Value = String> {
    let special = prop_oneof![
        Just('"'),
        Just('\\'),
        Just(' '),
        Just(','),
        Just(';'),
        Just('\t'),
        Just('\u{7f}'),
        Just('\u{e9}'),
        Just('\u{1f600}'),
        proptest::char::range('!', '~'),
        proptest::char::any(),
    ];
    prop_oneof![
        any::<String>(),
        proptest::collection::vec(special, 0..=8).prop_map(String::from_iter),
        "[ -~]{0,300}",
        "[a-z]{250,260}",
    ]
}

/// What the client makes of `text`: refused as a key by the core's rules, refused for the
/// header, or the value it sends.
enum Sent {
    NotAKey(KeyProblem),
    NotSendable { at: usize },
    Header(Key, KeyHeader),
}

fn send(text: &str) -> Sent {
    let key = match Key::new(text) {
        Ok(key) => key,
        Err(KeyError::InvalidKey(problem)) => return Sent::NotAKey(problem),
        Err(other) => panic!("a key is refused only as invalid, got {other:?}"),
    };
    match KeyHeader::new(&key) {
        Ok(header) => Sent::Header(key, header),
        Err(Error::KeyNotSendable { at }) => Sent::NotSendable { at },
        Err(other) => panic!("the encoder refuses only unsendable keys, got {other:?}"),
    }
}

/// The key the layer reads from `header`.
fn server_key(header: &KeyHeader) -> IdempotencyKey {
    IdempotencyKey::parse(header.as_str().as_bytes())
        .unwrap_or_else(|problem| panic!("the layer refused an encoded key: {problem:?}"))
}

proptest! {
    #![proptest_config(config())]

    // Every key the client accepts comes back from the layer's parser unchanged, or was refused
    // up front naming its first character the header cannot carry.
    #[test]
    fn every_accepted_key_reaches_the_layer_unchanged(text in any_key()) {
        match send(&text) {
            // Refused by the core's own rules, which name what is wrong.
            Sent::NotAKey(problem) => {
                let named = match problem {
                    KeyProblem::Empty => text.is_empty(),
                    KeyProblem::TooLong { bytes } => bytes == text.len() && bytes > MAX_KEY_BYTES,
                    KeyProblem::ControlCharacter { at } => {
                        text.chars().nth(at).is_some_and(char::is_control)
                    }
                };
                prop_assert!(named, "{:?} does not describe the key", problem);
            }
            Sent::NotSendable { at } => {
                let offending = text.chars().nth(at).expect("the position is inside the key");
                prop_assert!(!matches!(offending, ' '..='~'), "{offending:?} is printable ASCII");
                prop_assert!(
                    text.chars().take(at).all(|c| matches!(c, ' '..='~')),
                    "an earlier character was the first one the header cannot carry"
                );
            }
            Sent::Header(key, header) => {
                prop_assert!(reqwest::header::HeaderValue::from_str(header.as_str()).is_ok());
                let read = server_key(&header);
                prop_assert_eq!(read.as_str(), key.as_str());
            }
        }
    }

    // Two different keys the client sends are two different keys, and entries, at the layer.
    #[test]
    fn distinct_keys_stay_distinct(a in any_key(), b in any_key(), wrap in 0usize..4) {
        // Random pairs are rarely confusable; also pair each key with the forms that the raw
        // header used to merge with it (quoted, padded, escaped).
        let variants = [b, format!("\"{a}\""), format!(" {a} "), format!("{a}\\")];
        let b = &variants[wrap];
        prop_assume!(&a != b);
        if let (Sent::Header(_, first), Sent::Header(_, second)) = (send(&a), send(b)) {
            prop_assert_ne!(first.as_str(), second.as_str());
            let (first, second) = (server_key(&first), server_key(&second));
            prop_assert_ne!(first.as_str(), second.as_str());
            let scope = Scope::Anonymous;
            prop_assert_ne!(EntryId::new(&scope, &first), EntryId::new(&scope, &second));
        }
    }
}

// The longest key the client accepts fits the layer's limit, however many quotes it holds.
#[test]
fn the_longest_key_fits_the_layer_limit() {
    const { assert!(MAX_KEY_BYTES <= MAX_KEY_CHARS) };
    for text in ["k".repeat(MAX_KEY_BYTES), "\"".repeat(MAX_KEY_BYTES)] {
        let Sent::Header(key, header) = send(&text) else {
            panic!("the longest ASCII key is sendable");
        };
        assert_eq!(server_key(&header).as_str(), key.as_str());
    }
}

// The keys the raw header broke are sent in the grammar: the exact bytes on the wire.
#[test]
fn the_once_broken_keys_are_encoded() {
    let cases = [
        ("op 1", r#""op 1""#),
        ("a,b", r#""a,b""#),
        ("q", "q"),
        (r#""q""#, r#""\"q\"""#),
        (r"back\slash", r#""back\\slash""#),
        ("1abc", r#""1abc""#),
        ("pay-123", "pay-123"),
    ];
    for (key, wire) in cases {
        let header = KeyHeader::new(&Key::new(key).unwrap()).unwrap();
        assert_eq!(header.as_str(), wire, "{key}");
    }
    let refused = KeyHeader::new(&Key::new("op\u{e9}").unwrap());
    assert!(
        matches!(refused, Err(Error::KeyNotSendable { at: 2 })),
        "{refused:?}"
    );
}

/// A policy that retries quickly, so that a wrong fallback would show up as several requests.
fn policy() -> Policy {
    Policy::builder()
        .base(Duration::from_millis(1))
        .cap(Duration::from_millis(2))
        .build()
        .unwrap()
}

/// One payment of 5 under `key` through the adapter.
async fn pay(
    http: &HttpAdapter,
    client: &Client,
    url: &str,
    key: &str,
) -> Result<Outcome<HttpResponse>, Error> {
    let key = Key::new(key).unwrap();
    http.run_with_key(
        client,
        key,
        url,
        "application/json",
        br#"{"amount":5}"#.to_vec(),
    )
    .await
}

/// The value and replay marker of a successful outcome.
fn succeeded(outcome: Outcome<HttpResponse>) -> (HttpResponse, bool) {
    match outcome {
        Outcome::Succeeded {
            value,
            replayed,
            attempts: 1,
        } => (value, replayed),
        other => panic!("expected a first-attempt success, got {other:?}"),
    }
}

// Against the real layer: `op 1` and `a,b` are paid, `q` and `"q"` are two payments charged
// twice (neither a replay), and `opé` is refused by the client, charging and spending nothing.
#[tokio::test]
async fn the_layer_reads_each_key_the_client_sends() {
    let payments = Payments::new(Duration::ZERO);
    let server = Server::start(IdempotencyLayer::new().layer(payments.service()))
        .await
        .unwrap();
    let url = format!("{}/payments", server.url());
    let http = HttpAdapter::new();
    let client = Client::builder(policy()).seed(21).build();

    for (key, charges) in [("op 1", 1), ("a,b", 2), ("q", 3), ("\"q\"", 4)] {
        let (response, replayed) = succeeded(pay(&http, &client, &url, key).await.unwrap());
        assert_eq!((response.status, replayed), (201, false), "{key}");
        assert_eq!(payments.charges().await.unwrap(), charges, "{key}");
    }
    // The same key again is the same payment: a replay, no new charge.
    let (response, replayed) = succeeded(pay(&http, &client, &url, "\"q\"").await.unwrap());
    assert_eq!((response.status, replayed), (201, true));

    let (charges, handled, tokens) = (
        payments.charges().await.unwrap(),
        payments.attempts(),
        client.quota().tokens(),
    );
    let refused = pay(&http, &client, &url, "op\u{e9}").await;
    assert!(
        matches!(refused, Err(Error::KeyNotSendable { at: 2 })),
        "{refused:?}"
    );
    assert_eq!(payments.charges().await.unwrap(), charges);
    assert_eq!(payments.attempts(), handled);
    assert_eq!(client.quota().tokens(), tokens, "no retry quota spent");
    server.stop().await;
}

/// The heads of the requests that reached `listener`, one per connection, each answered 201;
/// stops at the first moment no connection is waiting.
async fn heads(listener: &TcpListener, expected: usize) -> Vec<String> {
    let mut heads = Vec::new();
    for _ in 0..expected {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut head = Vec::new();
        let mut buf = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut buf).await.unwrap();
            assert!(n > 0, "the connection closed inside the head");
            head.extend_from_slice(&buf[..n]);
        }
        heads.push(String::from_utf8_lossy(&head).into_owned());
        let created = "HTTP/1.1 201 Created\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        stream.write_all(created.as_bytes()).await.unwrap();
        stream.shutdown().await.ok();
    }
    heads
}

fn key_header(head: &str) -> Option<&str> {
    head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case(KEY_HEADER).then(|| value.trim())
    })
}

// On a raw listener: each sendable key's header bytes, and no connection at all for a key the
// client refuses, whether the operation runs through the adapter or `post` is used directly.
#[tokio::test]
async fn a_refused_key_sends_no_request() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/payments", listener.local_addr().unwrap());
    let http = HttpAdapter::new();
    let client = Client::builder(policy()).seed(22).build();

    let keys = ["op 1", "a,b", "q", "\"q\""];
    let sender = async {
        for key in keys {
            succeeded(pay(&http, &client, &url, key).await.unwrap());
        }
    };
    let (seen, ()) = tokio::join!(heads(&listener, keys.len()), sender);
    let wire: Vec<_> = seen.iter().map(|head| key_header(head)).collect();
    assert_eq!(
        wire,
        [
            Some(r#""op 1""#),
            Some(r#""a,b""#),
            Some("q"),
            Some(r#""\"q\"""#)
        ]
    );

    let refused = pay(&http, &client, &url, "op\u{e9}").await;
    assert!(
        matches!(refused, Err(Error::KeyNotSendable { at: 2 })),
        "{refused:?}"
    );
    // `post` under the caller's own run never sends it either: nothing left, nothing applied.
    let key = Key::new("op\u{e9}").unwrap();
    let direct = client
        .run_with_key(key, |attempt| {
            http.post(attempt, &url, "application/json", Vec::new())
        })
        .await;
    assert!(
        matches!(
            &direct,
            Outcome::Unknown {
                last: Failure::Refused(_),
                may_have_applied: false,
                ..
            }
        ),
        "{direct:?}"
    );
    // A connect completes in the kernel before any byte is written, so a request that had been
    // sent would have left a connection waiting here.
    let waiting = tokio::time::timeout(Duration::from_millis(50), listener.accept()).await;
    assert!(waiting.is_err(), "a refused key reached the listener");
}
