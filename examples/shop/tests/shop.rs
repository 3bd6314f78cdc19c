//! The shop as its clients see it: a real `shop` process on 127.0.0.1, on SQLite and on
//! PostgreSQL, killed and paused with real signals. Every test counts the orders in the
//! database, not only the answers. Its payments, charged through the lab's provider, are the
//! module `payments` (`tests/shop/payments.rs`).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

const TEA: &str = r#"{"item":"tea","quantity":2}"#;

/// Where a test's shop keeps its data: a SQLite file of its own, or a schema of its own.
struct Db {
    args: Vec<String>,
    cleanup: Option<(String, String)>,
    _dir: Option<TempDir>,
}

struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

static NEXT: AtomicUsize = AtomicUsize::new(0);

fn unique() -> String {
    format!(
        "{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

impl Db {
    fn sqlite() -> Self {
        let dir = std::env::temp_dir().join(format!("shop-test-{}", unique()));
        std::fs::create_dir_all(&dir).expect("a scratch folder");
        let store = format!("sqlite:{}", dir.join("shop.sqlite").display());
        Self {
            args: vec!["--store".into(), store],
            cleanup: None,
            _dir: Some(TempDir(dir)),
        }
    }

    fn postgres() -> Self {
        let url = std::env::var("RETRYKEY_PG_URL").expect("RETRYKEY_PG_URL: a PostgreSQL server");
        let schema = format!("shop_{}", unique());
        Self {
            args: vec![
                "--store".into(),
                url.clone(),
                "--schema".into(),
                schema.clone(),
            ],
            cleanup: Some((url, schema)),
            _dir: None,
        }
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        let Some((url, schema)) = self.cleanup.take() else {
            return;
        };
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            runtime.block_on(async {
                let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                    .await
                    .ok()?;
                tokio::spawn(connection);
                client
                    .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
                    .await
                    .ok()
            })
        });
        let _ = dropped.join();
    }
}

/// A running `shop` process, stopped by its id when dropped.
struct Shop {
    child: Child,
    addr: String,
    lines: Receiver<String>,
    /// What it logged to stderr so far.
    logs: Arc<Mutex<Vec<String>>>,
}

impl Shop {
    fn start(db: &Db, extra: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_shop"))
            .args(&db.args)
            .args(["--lease-ms", "500"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the shop starts");
        let stdout = child.stdout.take().expect("its stdout");
        let stderr = child.stderr.take().expect("its stderr");
        let logs = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&logs);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                kept.lock().expect("the log lines").push(line);
            }
        });
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let mut shop = Self {
            child,
            addr: String::new(),
            lines,
            logs,
        };
        let line = shop.wait_for("listening on ");
        shop.addr = line.trim_start_matches("listening on ").to_owned();
        shop
    }

    /// Waits (at most a minute) for a line of its output that starts with `prefix`.
    fn wait_for(&self, prefix: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no line {prefix:?} within a minute"));
            if line.starts_with(prefix) {
                return line;
            }
        }
    }

    fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([format!("-{name}"), self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -{name} {}", self.child.id());
    }

    async fn order(&self, key: &str, body: &str) -> Reply {
        send(&self.addr, "POST", "/orders", Some(key), body)
            .await
            .expect("an answer")
    }

    async fn orders(&self) -> i64 {
        let reply = send(&self.addr, "GET", "/orders/count", None, "")
            .await
            .expect("an answer");
        let value: serde_json::Value = serde_json::from_str(&reply.body).expect("JSON");
        value["orders"].as_i64().expect("a count")
    }

    /// Retries `key` (at most a minute) until it is answered 201; a 503 before that means the
    /// key is still held by an attempt that stopped.
    async fn order_until_created(&self, key: &str) -> Reply {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let reply = self.order(key, TEA).await;
            if reply.status == 201 {
                return reply;
            }
            assert_eq!(
                reply.status, 503,
                "only 503 while the key is held: {reply:?}"
            );
            assert!(Instant::now() < deadline, "never answered: {reply:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for Shop {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug)]
struct Reply {
    status: u16,
    head: String,
    body: String,
}

impl Reply {
    fn replayed(&self) -> bool {
        self.head
            .lines()
            .any(|line| line.eq_ignore_ascii_case("idempotent-replayed: true"))
    }
}

/// One HTTP/1.1 exchange on a connection of its own, under a 30-second deadline.
async fn send(
    addr: &str,
    method: &str,
    path: &str,
    key: Option<&str>,
    body: &str,
) -> std::io::Result<Reply> {
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(addr).await?;
        let key = key
            .map(|key| format!("idempotency-key: {key}\r\n"))
            .unwrap_or_default();
        let request = format!(
            "{method} {path} HTTP/1.1\r\nhost: shop\r\nconnection: close\r\ncontent-type: application/json\r\n{key}content-length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).await?;
        let mut raw = String::new();
        stream.read_to_string(&mut raw).await?;
        if raw.is_empty() {
            // The connection closed without a word: the server died before it answered.
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        Ok(Reply {
            status,
            head: head.to_owned(),
            body: body.to_owned(),
        })
    };
    tokio::time::timeout(Duration::from_secs(30), exchange)
        .await
        .unwrap_or_else(|_| Err(std::io::Error::other("no answer within 30 s")))
}

/// A retry with the same key and body replays the first answer, marked, and orders nothing.
async fn retry_replays(db: Db) {
    let shop = Shop::start(&db, &[]);
    let first = shop.order("order-1", TEA).await;
    let retry = shop.order("order-1", TEA).await;
    assert_eq!(first.status, 201, "{first:?}");
    assert_eq!(
        (retry.status, retry.body.as_str(), retry.replayed()),
        (201, first.body.as_str(), true)
    );
    assert_eq!(shop.orders().await, 1);
}

/// The same key with another body is refused with 422, and orders nothing.
async fn changed_body_is_refused(db: Db) {
    let shop = Shop::start(&db, &[]);
    let first = shop.order("order-2", TEA).await;
    let changed = shop
        .order("order-2", r#"{"item":"tea","quantity":3}"#)
        .await;
    assert_eq!((first.status, changed.status), (201, 422), "{changed:?}");
    assert_eq!(shop.orders().await, 1);
}

/// Twenty copies of one order sent at once make one order, and every answer names it.
async fn concurrent_duplicates_order_once(db: Db) {
    let shop = Shop::start(&db, &[]);
    let copies = (0..20).map(|_| {
        let addr = shop.addr.clone();
        tokio::spawn(async move { send(&addr, "POST", "/orders", Some("order-3"), TEA).await })
    });
    let mut bodies = Vec::new();
    for copy in copies {
        let reply = copy.await.expect("the task").expect("an answer");
        assert_eq!(reply.status, 201, "{reply:?}");
        bodies.push(reply.body);
    }
    bodies.dedup();
    assert_eq!(
        bodies.len(),
        1,
        "every copy got the same answer: {bodies:?}"
    );
    assert_eq!(shop.orders().await, 1);
}

/// Killed with SIGKILL at `step` of an order, the shop restarted on the same database orders
/// once for the retried key; a second retry replays that answer.
async fn killed_at_orders_once(db: Db, step: &str) {
    let first = Shop::start(&db, &["--pause-at", step]);
    let addr = first.addr.clone();
    let lost =
        tokio::spawn(async move { send(&addr, "POST", "/orders", Some("order-4"), TEA).await });
    first.wait_for(&format!("paused at {step}"));
    first.signal("KILL");
    assert!(
        lost.await.expect("the task").is_err(),
        "the killed shop's client gets no answer"
    );
    drop(first);

    let second = Shop::start(&db, &[]);
    let answer = second.order_until_created("order-4").await;
    let again = second.order("order-4", TEA).await;
    // A dead owner's key is taken over, and the new shop's log says so; an answer it finds
    // committed is replayed instead.
    // (The log is read from a pipe: wait, at most 10 s, for the line to come through.)
    let deadline = Instant::now() + Duration::from_secs(10);
    let took_over = || decisions(&second).0.iter().any(|d| d == "takeover");
    while step != "after" && !took_over() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(took_over(), step != "after", "{:#?}", decisions(&second).1);
    assert_eq!(
        (again.status, again.body.as_str(), again.replayed()),
        (201, answer.body.as_str(), true)
    );
    assert_eq!(
        second.orders().await,
        1,
        "one order after a crash {step} the commit"
    );
}

/// An owner paused (SIGSTOP) before its commit loses its key to a second shop once its lease
/// lapses; resumed, its commit is refused by the fence (503), and there is one order.
async fn paused_owner_is_fenced(db: Db) {
    let first = Shop::start(&db, &["--pause-at", "before", "--hold-ms", "1500"]);
    let addr = first.addr.clone();
    let late =
        tokio::spawn(async move { send(&addr, "POST", "/orders", Some("order-5"), TEA).await });
    first.wait_for("paused at before");
    first.signal("STOP");
    let second = Shop::start(&db, &[]);
    let answer = second.order_until_created("order-5").await;
    first.signal("CONT");
    let late = late.await.expect("the task").expect("an answer");
    assert_eq!(late.status, 503, "the fenced owner's answer: {late:?}");
    assert!(late.body.contains("lease-lost"), "{late:?}");
    let again = second.order("order-5", TEA).await;
    assert_eq!(
        (again.body.as_str(), again.replayed()),
        (answer.body.as_str(), true)
    );
    assert_eq!(second.orders().await, 1);
}

/// The decisions the shop's log shows, in order, and its lines.
fn decisions(shop: &Shop) -> (Vec<String>, Vec<String>) {
    let lines = shop.logs.lock().expect("the log lines").clone();
    let decisions = lines
        .iter()
        .filter_map(|line| line.split("decision=").nth(1))
        .map(|rest| {
            rest.split_whitespace()
                .next()
                .unwrap_or("")
                .trim_matches('"')
                .to_owned()
        })
        .collect();
    (decisions, lines)
}

// The lost-reply story in the shop's own log: the first attempt, its answer stored, the
// replay; each line names the entry by its digest, never by the key.
#[tokio::test(flavor = "multi_thread")]
async fn a_lost_reply_story_is_logged_in_order() {
    let db = Db::sqlite();
    let shop = Shop::start(&db, &["--log", "debug"]);
    let key = "order-for-customer-42";
    let first = shop.order(key, TEA).await;
    let retry = shop.order(key, TEA).await;
    assert_eq!(
        (first.status, retry.status, retry.replayed()),
        (201, 201, true)
    );
    assert_eq!(shop.orders().await, 1);
    // The events are written before each answer is sent; this side reads them from a pipe,
    // so it waits (at most 10 s) until the third has come through.
    let deadline = Instant::now() + Duration::from_secs(10);
    while decisions(&shop).0.len() < 3 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (decisions, lines) = decisions(&shop);
    assert_eq!(decisions, ["attempt", "recorded", "replay"], "{lines:#?}");
    assert!(
        lines.iter().all(|line| !line.contains(key)),
        "the key in the log: {lines:#?}"
    );
    assert!(
        lines
            .iter()
            .filter(|l| l.contains("decision="))
            .all(|l| l.contains("idempotency{")),
        "every decision inside the request's span: {lines:#?}"
    );
}

macro_rules! both_stores {
    ($($name:ident => $run:expr;)*) => {
        mod sqlite {
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread")]
                async fn $name() {
                    let run = $run;
                    run(Db::sqlite()).await;
                }
            )*
        }
        mod postgres {
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread")]
                #[cfg_attr(not(shop_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
                async fn $name() {
                    let run = $run;
                    run(Db::postgres()).await;
                }
            )*
        }
    };
}

// A module of this one program (not a program of its own under tests/).
#[path = "shop/payments.rs"]
mod payments;

both_stores! {
    retry_replays_the_first_answer => retry_replays;
    changed_body_gets_422 => changed_body_is_refused;
    twenty_duplicates_make_one_order => concurrent_duplicates_order_once;
    killed_before_the_commit_orders_once => |db| killed_at_orders_once(db, "before");
    killed_inside_the_commit_orders_once => |db| killed_at_orders_once(db, "inside");
    killed_after_the_commit_orders_once => |db| killed_at_orders_once(db, "after");
    paused_owner_is_fenced_out => paused_owner_is_fenced;
}

/// The packages (or, with `edges = "features"` and `invert`, tokio's features) that cargo
/// resolves for the shop's own build.
fn cargo_tree(args: &[&str]) -> String {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let output = Command::new(env!("CARGO"))
        .args(["tree", "--manifest-path", manifest, "--prefix", "none"])
        .args(args)
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("UTF-8")
}

// A service that depends on the lab's crates builds none of the lab's test or program
// machinery: no feature-set crate, no flag parser, no failpoints, none of the foreign stage's
// demo (its provider and checkout), and tokio without its test clock, processes or files. The
// one HTTP client it builds is the retry client's, which its payments call the provider with.
#[test]
fn the_shop_builds_nothing_it_does_not_use() {
    let packages = cargo_tree(&["-e", "normal"]);
    let names: Vec<&str> = packages
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for unwanted in ["retrykey-features", "clap", "anyhow", "fail"] {
        assert!(!names.contains(&unwanted), "the shop builds {unwanted}");
    }
    let foreign = cargo_tree(&["-e", "features,normal", "-i", "retrykey-foreign"]);
    assert!(
        !foreign.contains("retrykey-foreign feature \"demo\""),
        "the shop builds the foreign stage's demo"
    );
    // Normal edges only: the tests' own dependencies (the lab's provider) are theirs.
    let tokio = cargo_tree(&["-e", "features,normal", "-i", "tokio"]);
    for feature in ["test-util", "process", "fs"] {
        assert!(
            !tokio.contains(&format!("tokio feature \"{feature}\"")),
            "tokio is built with {feature}"
        );
    }
}

// The retry client of chapter 3, with a budget past the server's worst case, orders once
// through a crash: the shop commits the order, is killed before it answers, and a new shop on
// the same address replays the answer to the client's next attempt, under the same key.
#[tokio::test(flavor = "multi_thread")]
async fn the_retry_client_orders_once_through_a_crash() {
    use retrykey_client::adapters::{HttpAdapter, HttpRequest};
    use retrykey_client::{Client, Outcome, Policy};

    let db = Db::sqlite();
    let first = Shop::start(&db, &["--pause-at", "after"]);
    let (addr, base) = (first.addr.clone(), format!("http://{}", first.addr));
    let run = tokio::spawn(async move {
        // ANCHOR: client
        let policy = Policy::builder()
            .max_attempts(5)
            // Past a dead owner's lease (10 s by default) and the handler's own time.
            .budget(Duration::from_secs(30))
            .attempt_timeout(Duration::from_secs(20))
            .build()?;
        let client = Client::builder(policy).build();
        let order = HttpRequest::post(format!("{base}/orders"))
            .content_type("application/json")
            .body(r#"{"item":"tea","quantity":2}"#);
        let outcome = HttpAdapter::new().run(&client, &order).await?;
        // ANCHOR_END: client
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(outcome)
    });
    first.wait_for("paused at after");
    first.signal("KILL");
    drop(first);
    let second = Shop::start(&db, &["--listen", &addr]);

    let outcome = run
        .await
        .expect("the client's task")
        .expect("a request it can send");
    let Outcome::Succeeded {
        value,
        replayed,
        attempts,
    } = outcome
    else {
        panic!("the client did not get its order: {outcome:?}");
    };
    assert_eq!(value.status, 201);
    assert!(
        replayed && attempts >= 2,
        "replayed {replayed}, attempts {attempts}"
    );
    assert!(String::from_utf8_lossy(&value.body).contains("\"order\":1"));
    assert_eq!(
        second.orders().await,
        1,
        "one order for the client's one operation"
    );
}
