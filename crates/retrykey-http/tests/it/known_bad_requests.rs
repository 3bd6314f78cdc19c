//! Known-bad raw requests, sent byte for byte over TCP to the payments demo behind the layer.
//!
//! Each file in `tests/corpus/` is one request exactly as a hostile or broken client sends it;
//! `tests/corpus/index.toml` says what it must get back and what it may leave behind. hyper
//! refuses what is not HTTP before any service runs; the layer refuses bad keys and bodies
//! before the handler runs; the handler refuses what is not a payment. Nothing is ever charged.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use retrykey_http::payments::Payments;
use retrykey_http::{IdempotencyLayer, MemoryEntries, PROBLEM_JSON, TYPE_BASE};
use retrykey_server::loopback::Server;
use serde::Deserialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tower_layer::Layer;

/// The one case whose client shuts down its write side after sending: its body stops short
/// of its `content-length`, and only the end of the stream tells the server so.
const HALF_CLOSED: &str = "body-truncated.http";

/// How long one read may wait: every reply here is small and immediate.
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// How long the whole corpus may take, so a server that hangs fails the test instead.
const CORPUS_TIMEOUT: Duration = Duration::from_secs(60);

/// `tests/corpus/index.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Index {
    case: Vec<Case>,
}

/// One request and what it must get.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    file: String,
    status: u16,
    /// The problem `type` slug, or `"none"` for hyper's own bodiless refusal.
    problem: String,
    record: Record,
    checks: String,
}

/// What a case may leave in the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Record {
    /// No entry at all: refused before the layer reserved the key.
    None,
    /// One entry: the handler's own 400, kept for its key like any non-5xx answer.
    Entry,
}

/// A reply as read off the socket.
#[derive(Debug)]
struct Reply {
    status: u16,
    /// Header names lower-cased, values as sent.
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// `tests/corpus/index.toml`, parsed.
fn index() -> Index {
    let text =
        std::fs::read_to_string(corpus().join("index.toml")).expect("tests/corpus/index.toml");
    toml::from_str(&text).expect("index.toml parses")
}

/// The corpus folder, wherever the tests run from.
fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// Sends `raw` on a fresh connection and reads the reply until the server closes it.
async fn exchange(addr: std::net::SocketAddr, raw: &[u8], half_close: bool) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).await.expect("a connection");
    stream.write_all(raw).await.expect("the request is sent");
    if half_close {
        stream.shutdown().await.expect("the write side shuts down");
    }
    let mut received = Vec::new();
    let mut chunk = [0_u8; 4096];
    loop {
        match tokio::time::timeout(READ_TIMEOUT, stream.read(&mut chunk)).await {
            Ok(Ok(0)) => return received,
            Ok(Ok(n)) => received.extend_from_slice(&chunk[..n]),
            Ok(Err(error)) => panic!("reading the reply failed after {received:?}: {error}"),
            Err(_elapsed) => panic!("no end of reply within {READ_TIMEOUT:?} after {received:?}"),
        }
    }
}

/// Splits a raw HTTP/1.1 reply into status, headers and body.
fn parse(raw: &[u8]) -> Result<Reply, String> {
    let split = raw
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .ok_or("no end of head")?;
    let head = std::str::from_utf8(&raw[..split]).map_err(|_| "head is not UTF-8")?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| format!("bad status line {status_line:?}"))?;
    let headers = lines
        .map(|line| {
            let (name, value) = line.split_once(':').unwrap_or((line, ""));
            (name.to_ascii_lowercase(), value.trim().to_owned())
        })
        .collect();
    Ok(Reply {
        status,
        headers,
        body: raw[split + 4..].to_vec(),
    })
}

/// What is wrong with `reply` for `case`, if anything.
fn mismatch(case: &Case, reply: &Reply) -> Option<String> {
    if reply.status != case.status {
        return Some(format!("status {} (want {})", reply.status, case.status));
    }
    if case.problem == "none" {
        return (!reply.body.is_empty()).then(|| "a body where none was expected".to_owned());
    }
    if reply.header("content-type") != Some(PROBLEM_JSON) {
        return Some(format!("content-type {:?}", reply.header("content-type")));
    }
    let Ok(problem) = serde_json::from_slice::<serde_json::Value>(&reply.body) else {
        return Some("a problem body that is not JSON".to_owned());
    };
    let slug = format!("{TYPE_BASE}{}", case.problem);
    if !problem["type"]
        .as_str()
        .is_some_and(|uri| uri.ends_with(&slug))
    {
        return Some(format!("problem type {} (want …{slug})", problem["type"]));
    }
    if problem["status"].as_u64() != Some(u64::from(reply.status)) {
        return Some(format!("problem status {}", problem["status"]));
    }
    None
}

// Every request in the corpus gets the status and problem its index names over a real
// connection, leaves no key entry unless the handler itself answered, and charges nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn known_bad_requests_are_refused_and_charge_nothing() {
    let index = index();

    let listed: BTreeSet<&str> = index.case.iter().map(|case| case.file.as_str()).collect();
    assert_eq!(listed.len(), index.case.len(), "a file is listed twice");
    let present: BTreeSet<String> = std::fs::read_dir(corpus())
        .expect("tests/corpus")
        .map(|entry| entry.expect("a corpus entry").file_name())
        .map(|name| name.into_string().expect("a UTF-8 file name"))
        .filter(|name| name != "index.toml")
        .collect();
    let present: BTreeSet<&str> = present.iter().map(String::as_str).collect();
    assert_eq!(present, listed, "the corpus folder and its index disagree");
    assert!(
        listed.contains(HALF_CLOSED),
        "{HALF_CLOSED} is in the corpus"
    );
    for case in &index.case {
        assert!(
            case.file.ends_with(".http"),
            "{} is a .http file",
            case.file
        );
        assert!(
            !case.checks.trim().is_empty(),
            "{} says what it checks",
            case.file
        );
    }

    let store = Arc::new(MemoryEntries::default());
    let payments = Payments::new(Duration::ZERO);
    let server = Server::start(
        IdempotencyLayer::builder()
            .shared_store(store.clone())
            .build()
            .layer(payments.service()),
    )
    .await
    .expect("the server starts");

    let failures = tokio::time::timeout(CORPUS_TIMEOUT, async {
        let mut failures = Vec::new();
        for case in &index.case {
            let raw = std::fs::read(corpus().join(&case.file)).expect("a corpus file");
            let (entries, attempts) = (store.len(), payments.attempts());
            let charges = payments.charges().await.expect("the book answers");
            let received = exchange(server.addr(), &raw, case.file == HALF_CLOSED).await;
            let wrong = match parse(&received) {
                Ok(reply) => mismatch(case, &reply),
                Err(why) => Some(why),
            };
            if let Some(wrong) = wrong {
                let text = String::from_utf8_lossy(&received);
                failures.push(format!(
                    "{}: {wrong}\n  checks: {}\n  reply: {text:?}",
                    case.file, case.checks
                ));
            }
            let answered = case.record == Record::Entry;
            let kept = usize::from(answered);
            if store.len() != entries + kept {
                failures.push(format!(
                    "{}: the store went from {entries} to {} entries (want +{kept})",
                    case.file,
                    store.len()
                ));
            }
            // The handler runs exactly for the cases whose answer is its own.
            let ran = payments.attempts() - attempts;
            if ran != u64::from(answered) {
                failures.push(format!("{}: handler runs {ran} (want {kept})", case.file));
            }
            if payments.charges().await.expect("the book answers") != charges {
                failures.push(format!("{}: a payment was charged", case.file));
            }
        }
        failures
    })
    .await
    .expect("the corpus finishes in time");

    let stopped = server.stop().await;
    assert_eq!(stopped.cut_off, 0, "no connection was left open");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// The book's "Operating it" appendix lists every case with its status and what it checks, so
// the page a class reads cannot drift from the corpus the test sends.
#[test]
fn the_operating_appendix_lists_every_case() {
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/src/appendix-operating.md");
    let page = std::fs::read_to_string(page).expect("docs/src/appendix-operating.md");
    let rows: Vec<&str> = page
        .lines()
        .filter(|line| line.starts_with("| `") && line.contains(".http` |"))
        .collect();
    let index = index();
    let cases: BTreeSet<String> = index
        .case
        .iter()
        .map(|case| format!("| `{}` |", case.file))
        .collect();
    let listed: BTreeSet<String> = rows
        .iter()
        .filter_map(|row| row.split_inclusive("` |").next().map(str::to_owned))
        .collect();
    assert_eq!(
        listed, cases,
        "the appendix lists other requests than the corpus holds"
    );
    for case in index.case {
        let row = rows
            .iter()
            .find(|row| row.starts_with(&format!("| `{}` |", case.file)))
            .unwrap_or_else(|| panic!("{} has no row in the appendix", case.file));
        let problem = match case.problem.as_str() {
            "none" => "none (hyper)".to_owned(),
            slug => format!("`{slug}`"),
        };
        let record = match case.record {
            Record::None => "none",
            Record::Entry => "entry",
        };
        let expected = format!(
            "| `{}` | {} | {problem} | {record} | {} |",
            case.file, case.status, case.checks
        );
        assert_eq!(*row, expected, "the appendix's row for {}", case.file);
    }
}
