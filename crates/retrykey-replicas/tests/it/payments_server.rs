//! The `payments` binary as any HTTP client sees it: its first line, its routes, its fault hooks.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use retrykey_server::loopback::{LoopbackClient, LoopbackReply};
use retrykey_testkit::wait_until;

/// The server process; killed when dropped, so a failing test leaves nothing behind.
struct Payments {
    child: Child,
    stdout: BufReader<std::process::ChildStdout>,
    client: LoopbackClient,
}

impl Payments {
    fn start(args: &[&str]) -> Self {
        Self::start_logging(args, None)
    }

    /// The same, with `RETRYKEY_LOG` set to `level` and stderr kept for [`Payments::stop`].
    fn start_logging(args: &[&str], level: Option<&str>) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_payments"));
        command.args(["--listen", "127.0.0.1:0"]).args(args);
        if let Some(level) = level {
            command.env("RETRYKEY_LOG", level).stderr(Stdio::piped());
        }
        let mut child = command
            .stdout(Stdio::piped())
            .spawn()
            .expect("the payments binary starts");
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        let url = first
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("first line: {first:?}"))
            .to_owned();
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        Self {
            child,
            stdout,
            client: LoopbackClient::new(url),
        }
    }

    async fn count(&self) -> String {
        self.client.get("/payments/count", &[]).await.unwrap().body
    }

    async fn pay(&self, headers: &[(&str, &str)], body: &'static str) -> LoopbackReply {
        self.client.post("/payments", headers, body).await.unwrap()
    }
}

impl Payments {
    /// Kills the server (SIGKILL closes its stderr) and returns what it wrote there.
    fn stop(mut self) -> Vec<String> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let stderr = self
            .child
            .stderr
            .take()
            .expect("started with start_logging");
        BufReader::new(stderr).lines().map(Result::unwrap).collect()
    }
}

impl Drop for Payments {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// A valid payment is charged once per key; the count route reports charges and attempts.
#[tokio::test]
async fn pays_once_per_key_and_counts() {
    let server = Payments::start(&["--work-ms", "0"]);
    let key = [("idempotency-key", "p-1")];
    let first = server.pay(&key, r#"{"amount":500}"#).await;
    let retry = server.pay(&key, r#"{"amount":500}"#).await;
    assert_eq!(
        (first.status, first.body.as_str()),
        (201, r#"{"payment":1}"#)
    );
    assert_eq!(first.header("location"), Some("/payments/1"));
    assert!(retry.replayed());
    assert_eq!(server.count().await, r#"{"charges":1,"attempts":1}"#);
}

// Invalid JSON and non-positive amounts get 400 problems and charge nothing.
#[tokio::test]
async fn invalid_payments_are_400_without_a_charge() {
    let server = Payments::start(&["--work-ms", "0"]);
    for body in [
        "not json",
        r#"{"amount":0}"#,
        r#"{"amount":-5}"#,
        r#"{"amount":1.5}"#,
        r#"{"sum":5}"#,
    ] {
        let reply = server.pay(&[], body).await;
        assert_eq!(reply.status, 400, "{body}");
        assert_eq!(
            reply.header("content-type"),
            Some("application/problem+json")
        );
        assert!(
            reply.body.contains("problem:invalid-payment"),
            "{}",
            reply.body
        );
    }
    assert_eq!(server.count().await, r#"{"charges":0,"attempts":5}"#);
}

// A keyed 4xx from the handler is an answer: it is stored and replayed, not run again.
#[tokio::test]
async fn a_keyed_client_error_is_replayed() {
    let server = Payments::start(&["--work-ms", "0"]);
    let key = [("idempotency-key", "p-bad")];
    let first = server.pay(&key, r#"{"amount":0}"#).await;
    let retry = server.pay(&key, r#"{"amount":0}"#).await;
    assert_eq!((first.status, first.replayed()), (400, false));
    assert_eq!((retry.status, retry.replayed()), (400, true));
    assert_eq!(retry.body, first.body);
    assert_eq!(server.count().await, r#"{"charges":0,"attempts":1}"#);
}

// X-Flaky fails the first request of each token with 500 before charging; the retry succeeds.
#[tokio::test]
async fn flaky_tokens_fail_once_each() {
    let server = Payments::start(&["--work-ms", "0"]);
    let post = async |token| {
        server
            .pay(&[("x-flaky", token)], r#"{"amount":1}"#)
            .await
            .status
    };
    assert_eq!(
        (
            post("t1").await,
            post("t1").await,
            post("t2").await,
            post("t2").await
        ),
        (500, 201, 500, 201)
    );
    assert_eq!(server.count().await, r#"{"charges":2,"attempts":4}"#);
}

// A delayed flaky first attempt keeps duplicates waiting; they get 503 and the retry charges once.
#[tokio::test]
async fn waiting_duplicates_of_a_failing_first_attempt_get_503() {
    let server = Payments::start(&["--work-ms", "0"]);
    let headers = [
        ("idempotency-key", "p-2"),
        ("x-flaky", "p-2"),
        ("x-delay-ms", "2000"),
    ];
    let client = server.client.clone();
    let first =
        tokio::spawn(async move { client.post("/payments", &headers, r#"{"amount":9}"#).await });
    // Started (and waiting in its 2-second delay) once the count shows the attempt.
    wait_until(
        "the first attempt started",
        Duration::from_secs(60),
        || async { server.count().await == r#"{"charges":0,"attempts":1}"# },
    )
    .await;
    let duplicate = server.pay(&headers, r#"{"amount":9}"#).await;
    assert_eq!(first.await.unwrap().unwrap().status, 500);
    assert_eq!(
        (duplicate.status, duplicate.header("retry-after")),
        (503, Some("1"))
    );
    let retry = server.pay(&headers, r#"{"amount":9}"#).await;
    assert_eq!((retry.status, retry.replayed()), (201, false));
    assert_eq!(server.count().await, r#"{"charges":1,"attempts":2}"#);
}

// Unknown routes and wrong methods get problems, not charges.
#[tokio::test]
async fn unknown_routes_are_problems() {
    let server = Payments::start(&["--work-ms", "0"]);
    assert_eq!(server.client.get("/nope", &[]).await.unwrap().status, 404);
    assert_eq!(
        server.client.get("/payments", &[]).await.unwrap().status,
        405
    );
    assert_eq!(server.count().await, r#"{"charges":0,"attempts":0}"#);
}

// With --require-key, a keyless payment is refused with 400 and nothing runs.
#[tokio::test]
async fn require_key_refuses_keyless_payments() {
    let server = Payments::start(&["--work-ms", "0", "--require-key"]);
    let reply = server.pay(&[], r#"{"amount":1}"#).await;
    assert_eq!(reply.status, 400);
    assert!(reply.body.contains("problem:key-missing"), "{}", reply.body);
    assert_eq!(server.count().await, r#"{"charges":0,"attempts":0}"#);
}

// Ctrl-C (SIGINT) stops the server cleanly, after it reports its totals.
#[tokio::test]
async fn interrupt_shuts_down_cleanly() {
    let mut server = Payments::start(&["--work-ms", "0"]);
    server.pay(&[], r#"{"amount":1}"#).await;
    let status = Command::new("bash") // bash's own `kill`, present wherever bash is
        .args(["-c", &format!("kill -INT {}", server.child.id())])
        .status()
        .expect("bash is available");
    assert!(status.success());
    let mut last = String::new();
    server.stdout.read_line(&mut last).unwrap();
    assert_eq!(last.trim(), "stopped: charges=1 attempts=1");
    assert!(server.child.wait().unwrap().success());
}

// With RETRYKEY_LOG=info the server reports each decision on stderr: the first attempt, then
// the replay, inside the request's span, naming the entry by its digest and never the key.
#[tokio::test]
async fn reports_each_decision_on_stderr_when_asked() {
    let key = "customer-7-invoice-12";
    let server = Payments::start_logging(&["--work-ms", "0"], Some("info"));
    let headers = [("idempotency-key", key)];
    let body = r#"{"amount":5}"#;
    let (one, two) = (
        server.pay(&headers, body).await,
        server.pay(&headers, body).await,
    );
    assert_eq!((one.status, two.status, two.replayed()), (201, 201, true));
    let lines = server.stop();
    let decisions: Vec<&str> = lines
        .iter()
        .filter_map(|line| line.split("decision=\"").nth(1))
        .filter_map(|rest| rest.split('"').next())
        .collect();
    assert_eq!(decisions, ["attempt", "replay"], "{lines:#?}");
    assert!(lines.iter().all(|line| !line.contains(key)), "{lines:#?}");
    assert!(
        lines.iter().all(|line| line.contains("idempotency{")),
        "{lines:#?}"
    );
}

// An unreadable RETRYKEY_LOG is named on stderr, and the server still starts.
#[test]
fn an_unreadable_log_level_is_named_and_the_server_starts() {
    // `start_logging` reads the address from the first line: the server started.
    let lines = Payments::start_logging(&[], Some("chatty")).stop();
    assert_eq!(
        lines.first().map(String::as_str),
        Some(r#"payments: RETRYKEY_LOG: expected error, warn, info, debug or trace, got "chatty""#)
    );
}
