//! Sprays one payment over several `payments` replicas at once, and shows who answered what.
//!
//! `spray --replicas URL,URL,URL [--key K] [--copies N]` sends N copies of one keyed payment
//! (same key, same body), copy i to replica i mod R, all released together by a barrier, then
//! prints one line per copy in copy order and the charges each replica reports. Replicas are
//! named A, B, C… rather than by address, so the output is the same on every run and machine.
//!
//! `--keys M` sends M distinct keys instead (`K-1` … `K-M`, once each, round-robin) and prints
//! a summary: answers per status, and charges.
//!
//! Every key is written in the header's grammar by the retry client's encoder
//! ([`KeyHeader`]): bare when it is a token, else quoted. A key the header cannot carry
//! (not ASCII, say) is refused before anything is sent.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use retrykey::Key;
use retrykey_client::adapters::KeyHeader;
use retrykey_program::flags;
use tokio::sync::Barrier;

/// Send concurrent payments over several replicas and print what each caller got.
#[derive(Debug, Parser)]
struct Args {
    /// The replicas' base URLs, comma-separated (http://127.0.0.1:PORT,...).
    #[arg(long, value_name = "URL,URL,...", value_delimiter = ',', required = true, value_parser = base_url)]
    replicas: Vec<String>,
    /// The Idempotency-Key of every copy (with --keys: the prefix of each key). Sent bare
    /// when it is a token, else quoted; a key that is not printable ASCII is refused.
    #[arg(long, value_name = "K", default_value = "spray", value_parser = sendable_key)]
    key: String,
    /// How many copies of the one payment to send.
    #[arg(long, value_name = "N", value_parser = flags::positive, default_value = "9")]
    copies: usize,
    /// Send this many distinct keys, once each, instead of copies of one.
    #[arg(long, value_name = "M", value_parser = flags::positive, conflicts_with = "copies")]
    keys: Option<usize>,
}

/// The body of every payment sprayed: the same for each copy, so the fingerprints match.
const BODY: &str = r#"{"amount":500}"#;

fn base_url(text: &str) -> Result<String, String> {
    match text.strip_prefix("http://") {
        Some(rest) if !rest.is_empty() => Ok(text.trim_end_matches('/').to_owned()),
        // The refused value is added by `flags::one_line`.
        _ => Err("expected http://HOST:PORT".to_owned()),
    }
}

/// `key` as the header carries it: a valid operation key of printable ASCII, encoded.
fn key_header(key: &str) -> Result<KeyHeader, String> {
    let key = Key::new(key).map_err(|error| error.to_string())?;
    KeyHeader::new(&key).map_err(|error| error.to_string())
}

/// A `--key` the header can carry, refused before any replica is contacted otherwise.
fn sendable_key(text: &str) -> Result<String, String> {
    key_header(text).map(|_| text.to_owned())
}

/// A replica's name in the output: A, B, C… (then R27, R28… past Z).
fn name(index: usize) -> String {
    match u8::try_from(index) {
        Ok(i) if i < 26 => char::from(b'A' + i).to_string(),
        _ => format!("R{}", index + 1),
    }
}

/// One caller's outcome: an answer, or why it got none (without an address, to stay stable).
type Outcome = Result<Answered, String>;

/// What a replica answered: status, body, and whether it was a replay.
#[derive(Debug)]
struct Answered {
    status: u16,
    body: String,
    replayed: bool,
}

/// One replica, reached over HTTP/1.1 with the same client the retry adapter uses.
#[derive(Debug, Clone)]
struct Replica {
    http: reqwest::Client,
    base: String,
}

impl Replica {
    fn new(http: &reqwest::Client, base: &str) -> Self {
        Self {
            http: http.clone(),
            base: base.to_owned(),
        }
    }

    /// Sends one request and reads the whole answer.
    async fn send(&self, request: reqwest::RequestBuilder) -> Result<Answered, reqwest::Error> {
        let response = request.send().await?;
        let status = response.status().as_u16();
        let replayed = response
            .headers()
            .get("idempotent-replayed")
            .is_some_and(|value| value == "true");
        let body = response.text().await?.trim_end().to_owned();
        Ok(Answered {
            status,
            body,
            replayed,
        })
    }

    /// The payment, under the key `key` (already in the header's grammar).
    async fn pay(&self, key: &KeyHeader) -> Result<Answered, reqwest::Error> {
        let request = self
            .http
            .post(format!("{}/payments", self.base))
            .header("content-type", "application/json")
            .header("idempotency-key", key.as_str())
            .body(BODY);
        self.send(request).await
    }

    /// `GET /payments/count`.
    async fn count(&self) -> Result<Answered, reqwest::Error> {
        let request = self.http.get(format!("{}/payments/count", self.base));
        self.send(request).await
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match retrykey_program::parse::<Args>("spray") {
        Ok(args) => args,
        Err(exit) => return exit,
    };
    let http = match reqwest::Client::builder().tcp_nodelay(true).build() {
        Ok(http) => http,
        Err(error) => {
            eprintln!("spray: no HTTP client: {error}");
            return ExitCode::FAILURE;
        }
    };
    let clients: Vec<Replica> = args
        .replicas
        .iter()
        .map(|base| Replica::new(&http, base))
        .collect();
    let names: Vec<String> = (0..clients.len()).map(name).collect();
    let keys = match keys(&args) {
        Ok(keys) => keys,
        Err(error) => {
            eprintln!("spray: the keys made from --key cannot be sent: {error}");
            return ExitCode::from(2);
        }
    };
    let outcomes = spray(&clients, keys).await;
    let failed = outcomes.iter().filter(|outcome| outcome.is_err()).count();
    report(&args, &names, &outcomes);
    println!("charges: {}", charges(&clients, &names).await.join(", "));
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The keys to send: `--copies` times `--key`, or `--keys` keys numbered after it. A prefix
/// that is sendable can still make a key too long once numbered.
fn keys(args: &Args) -> Result<Vec<KeyHeader>, String> {
    let keys: Vec<String> = match args.keys {
        None => vec![args.key.clone(); args.copies],
        Some(count) => (1..=count).map(|i| format!("{}-{i}", args.key)).collect(),
    };
    keys.iter().map(|key| key_header(key)).collect()
}

/// Prints what was sent where, each copy's answer (for copies of one key), and the summary.
fn report(args: &Args, names: &[String], outcomes: &[Outcome]) {
    match args.keys {
        None => {
            println!(
                "{} copies of key {:?} over {} replicas ({})",
                args.copies,
                args.key,
                names.len(),
                names.join(", ")
            );
            for (copy, outcome) in outcomes.iter().enumerate() {
                let replica = &names[copy % names.len()];
                println!("copy {:>2} -> {replica}: {}", copy + 1, describe(outcome));
            }
        }
        Some(count) => println!(
            "{count} keys over {} replicas ({})",
            names.len(),
            names.join(", ")
        ),
    }
    for line in summary(outcomes, args.keys.is_none()) {
        println!("{line}");
    }
}

/// Sends one payment per key, key i to replica i mod R, all at the same moment; the outcomes
/// come back in key order, whatever order they finished in.
async fn spray(clients: &[Replica], keys: Vec<KeyHeader>) -> Vec<Outcome> {
    // Every sender waits at the barrier until all are ready: the duplicates then race for real,
    // instead of each arriving after the previous one was answered.
    let barrier = Arc::new(Barrier::new(keys.len()));
    let tasks: Vec<_> = keys
        .into_iter()
        .enumerate()
        .map(|(i, key)| {
            let client = clients[i % clients.len()].clone();
            let barrier = Arc::clone(&barrier);
            tokio::spawn(async move {
                barrier.wait().await;
                client
                    .pay(&key)
                    .await
                    .map_err(|_| "no answer (connection failed)".to_owned())
            })
        })
        .collect();
    let mut outcomes = Vec::with_capacity(tasks.len());
    for task in tasks {
        outcomes.push(
            task.await
                .unwrap_or_else(|_| Err("sender failed".to_owned())),
        );
    }
    outcomes
}

/// `201 {"payment":1} replayed`: status, body, and whether it was a replay.
fn describe(outcome: &Outcome) -> String {
    match outcome {
        Ok(reply) => format!(
            "{} {} {}",
            reply.status,
            reply.body,
            if reply.replayed {
                "replayed"
            } else {
                "first answer"
            }
        ),
        Err(error) => error.clone(),
    }
}

/// Answers per status (and per body, for copies of one key, where every body should match),
/// each with how many were first answers and how many replays.
fn summary(outcomes: &[Outcome], with_body: bool) -> Vec<String> {
    let mut groups: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for outcome in outcomes {
        let (label, replayed) = match outcome {
            Ok(reply) if with_body => (format!("{} {}", reply.status, reply.body), reply.replayed),
            Ok(reply) => (reply.status.to_string(), reply.replayed),
            Err(error) => (error.clone(), false),
        };
        let group = groups.entry(label).or_default();
        if replayed {
            group.1 += 1;
        } else {
            group.0 += 1;
        }
    }
    groups
        .into_iter()
        .map(|(label, (first, replayed))| {
            format!(
                "answers {label}: {} ({first} first, {replayed} replayed)",
                first + replayed
            )
        })
        .collect()
}

/// Each replica's charge count, as it reports it (`GET /payments/count`).
async fn charges(clients: &[Replica], names: &[String]) -> Vec<String> {
    let mut counts = Vec::with_capacity(clients.len());
    for (client, name) in clients.iter().zip(names) {
        let count = match client.count().await {
            Ok(reply) if reply.status == 200 => charges_in(&reply.body)
                .map_or_else(|| format!("unreadable {:?}", reply.body), |n| n.to_string()),
            Ok(reply) => format!("status {}", reply.status),
            Err(_) => "no answer".to_owned(),
        };
        counts.push(format!("{name} {count}"));
    }
    counts
}

/// The `charges` of `{"charges":N,"attempts":M}`. Attempts are left out on purpose: they
/// count the handler runs of one process, and which replica ran the handler varies per run.
fn charges_in(body: &str) -> Option<u64> {
    let rest = body.split_once("\"charges\":")?.1;
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..digits].parse().ok()
}
