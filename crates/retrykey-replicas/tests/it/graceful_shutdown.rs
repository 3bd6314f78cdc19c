//! SIGTERM stops the `payments` server gracefully: it stops accepting, closes connections that
//! are between requests, lets running payments finish (those whose client left too), answers
//! them, and exits 0. A payment still running at the shutdown deadline is cut off, the exit
//! status and stderr say so, and with a database store its key is left in flight, never
//! completed, so that the client's retry runs it once instead of replaying an answer nobody got.

use std::time::Duration;

use crate::support::{DbFile, PgSchema, Replica};
use retrykey_http::{EntryId, IdempotencyKey, Scope};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A keyed payment that takes `delay_ms` in the handler, sent in the background.
fn slow_payment(
    server: &Replica,
    key: &'static str,
    delay_ms: &'static str,
) -> tokio::task::JoinHandle<
    Result<retrykey_server::loopback::LoopbackReply, retrykey_http::BoxError>,
> {
    let client = server.client.clone();
    tokio::spawn(async move {
        client
            .post(
                "/payments",
                &[("idempotency-key", key), ("x-delay-ms", delay_ms)],
                r#"{"amount":5}"#,
            )
            .await
    })
}

// SIGTERM during a five-second keyed payment: new connections are refused at once, a quiet
// kept-alive connection is closed at once, the running payment gets its 201, one charge is
// counted, and the server exits 0 once the reply is out. "At once" is read from the order of
// events: when the quiet connection's close arrives, no byte of the payment's answer has.
#[tokio::test]
async fn sigterm_lets_a_running_payment_finish_then_exits_0() {
    let server = Replica::start(&["--work-ms", "0"]);
    let mut quiet = TcpStream::connect(server.addr())
        .await
        .expect("a connection");
    quiet
        .write_all(b"GET /payments/count HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let mut answer = [0_u8; 512];
    assert!(
        quiet.read(&mut answer).await.unwrap() > 0,
        "the count came back"
    );
    // The payment on a raw connection of its own, so that the test can look at it without
    // waiting: the server sends its answer there before it could close anything after it.
    let mut running = TcpStream::connect(server.addr())
        .await
        .expect("a connection");
    let body = r#"{"amount":5}"#;
    running
        .write_all(
            format!(
                "POST /payments HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n\
                 idempotency-key: long\r\nx-delay-ms: 5000\r\nconnection: close\r\n\
                 content-length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    server.handler_entered(1).await;

    server.sigterm();
    tokio::time::timeout(Duration::from_secs(60), async {
        while quiet.read(&mut answer).await.is_ok_and(|n| n > 0) {}
    })
    .await
    .expect("the quiet connection was closed");
    let mut early = [0_u8; 64];
    assert!(
        matches!(running.try_read(&mut early), Err(error) if error.kind() == std::io::ErrorKind::WouldBlock),
        "the quiet connection was closed only after the running payment was answered"
    );
    assert!(
        TcpStream::connect(server.addr()).await.is_err(),
        "new connections are refused while the payment still runs"
    );

    let mut reply = Vec::new();
    tokio::time::timeout(Duration::from_secs(60), running.read_to_end(&mut reply))
        .await
        .expect("the payment was answered")
        .expect("an answer, not a cut connection");
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.starts_with("HTTP/1.1 201 "), "{reply}");
    let (_, body) = reply.split_once("\r\n\r\n").expect("a head and a body");
    assert_eq!(body.trim_end(), r#"{"payment":1}"#);
    let exit = tokio::task::spawn_blocking(move || server.exit(Duration::from_secs(30)))
        .await
        .unwrap();
    assert_eq!(exit.code, Some(0), "{exit:?}");
    assert_eq!(exit.stdout, ["stopped: charges=1 attempts=1"]);
}

// A payment whose client left before SIGTERM runs on by itself; the stop waits for it too,
// and its charge is counted before the server exits 0.
#[tokio::test]
async fn sigterm_waits_for_a_payment_whose_client_left() {
    let server = Replica::start(&["--work-ms", "0"]);
    let abandoned = slow_payment(&server, "left", "1500");
    server.handler_entered(1).await;
    abandoned.abort(); // the client goes away; the handler does not
    tokio::time::sleep(Duration::from_millis(100)).await;
    server.sigterm();
    let exit = tokio::task::spawn_blocking(move || server.exit(Duration::from_secs(30)))
        .await
        .unwrap();
    assert_eq!(exit.code, Some(0), "{exit:?}");
    assert_eq!(exit.stdout, ["stopped: charges=1 attempts=1"]);
}

/// The key's row, as the store keeps it: `Some(true)` while in flight (no answer, no expiry),
/// `Some(false)` once completed, `None` when there is no row.
type KeyRow<'a> =
    Box<dyn Fn(EntryId) -> std::pin::Pin<Box<dyn Future<Output = Option<bool>> + 'a>> + 'a>;

/// Starts a payment that runs for 20 s, sends SIGTERM with a 500 ms deadline, and checks that
/// it was cut off: no answer, exit status 1 with the reason on stderr, nothing charged, the key
/// in flight in the database. Then a new server on the same database takes the key over once
/// its lease has run out and charges it as a first attempt; returns the charges it reports.
async fn cut_off_then_retried(store_args: &[String], key_row: KeyRow<'_>) -> u64 {
    let mut args: Vec<String> = store_args.to_vec();
    args.extend(
        [
            "--lease",
            "1s",
            "--shutdown-deadline",
            "500ms",
            "--work-ms",
            "0",
        ]
        .map(str::to_owned),
    );
    let server = Replica::start(&args);
    let running = slow_payment(&server, "cut", "20000");
    server.handler_entered(1).await;
    server.sigterm();
    let exit = tokio::task::spawn_blocking(move || server.exit(Duration::from_secs(30)))
        .await
        .unwrap();
    assert_eq!(
        exit.code,
        Some(1),
        "a cut-off payment is not a clean stop: {exit:?}"
    );
    assert_eq!(exit.stdout, ["stopped: charges=0 attempts=1"]);
    assert_eq!(
        exit.stderr,
        [
            "payments: the shutdown deadline passed: 1 connection(s) cut off, 1 payment(s) still running"
        ]
    );
    assert!(
        running.await.unwrap().is_err(),
        "the cut-off client got no answer"
    );
    let id = EntryId::new(&Scope::Anonymous, &IdempotencyKey::parse(b"cut").unwrap());
    assert_eq!(
        key_row(id).await,
        Some(true),
        "the key is in flight, not finished"
    );

    let next = Replica::start(&args);
    // Past the cut-off attempt's lease, the key is free to take over.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let retry = next
        .client
        .post(
            "/payments",
            &[("idempotency-key", "cut")],
            r#"{"amount":5}"#,
        )
        .await
        .expect("an answer");
    assert_eq!(retry.status, 201, "{}", retry.body);
    assert!(!retry.replayed(), "a first attempt, not a replay");
    assert_eq!(key_row(id).await, Some(false), "now the key is finished");
    next.charges().await
}

// SQLite: the payment cut off at the deadline leaves its key in flight and charges nothing;
// the retry on a new server charges once.
#[tokio::test]
async fn past_the_deadline_a_payment_is_cut_off_and_its_key_left_unfinished_sqlite() {
    let db = DbFile::new("cut-off");
    let path = db.path().to_owned();
    let key_row: KeyRow<'_> = Box::new(move |id| {
        let path = path.clone();
        Box::pin(async move {
            let db = rusqlite::Connection::open(&path).expect("the store's file");
            db.query_row(
                "SELECT expires_at IS NULL AND status IS NULL FROM http_keys WHERE entry_id = ?1",
                [id.as_bytes().as_slice()],
                |row| row.get(0),
            )
            .ok()
        })
    });
    assert_eq!(cut_off_then_retried(&db.args(), key_row).await, 1);
}

// The same on PostgreSQL, where the charge count is also read from the table itself.
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
#[tokio::test]
async fn past_the_deadline_a_payment_is_cut_off_and_its_key_left_unfinished_postgres() {
    let schema = PgSchema::new("cut_off").await;
    let key_row: KeyRow<'_> = Box::new(|id| Box::pin(schema.key_in_flight(id)));
    assert_eq!(cut_off_then_retried(&schema.args(), key_row).await, 1);
    assert_eq!(schema.charges().await, 1);
}
