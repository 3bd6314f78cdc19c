//! A flood of fresh keys into a `payments` server whose database store is bounded: the keys
//! table never holds more than its bound, a key over it is refused with 503 store-full and
//! `Retry-After` (nothing live is evicted to make room), and once the accepted answers have
//! expired the sweep reclaims their rows for new keys. (`just flood` is the 100,000-key run.)
//!
//! The answers are kept an hour, so that none expires while the first flood and its replays
//! run, however slowly; a second replica whose clock runs two hours ahead then sees them all
//! expired.

use crate::support::{DbFile, PgSchema, Replica};

const BOUND: u64 = 100;

/// Sends `keys` fresh keys, eight at a time; returns the accepted keys with their answers and
/// how many were refused as store-full (anything else fails the test).
async fn flood(server: &Replica, prefix: &str, keys: u64) -> (Vec<(String, String)>, u64) {
    let mut accepted = Vec::new();
    let mut refused = 0;
    let keys: Vec<String> = (0..keys).map(|n| format!("{prefix}-{n}")).collect();
    for batch in keys.chunks(8) {
        let sending: Vec<_> = batch
            .iter()
            .map(|key| {
                let (client, key) = (server.client.clone(), key.clone());
                tokio::spawn(async move {
                    let headers = [("idempotency-key", key.as_str())];
                    client.post("/payments", &headers, r#"{"amount":5}"#).await
                })
            })
            .collect();
        for (key, sent) in batch.iter().zip(sending) {
            let reply = sent.await.unwrap().expect("an answer");
            match reply.status {
                201 => accepted.push((key.clone(), reply.body)),
                503 => {
                    assert_eq!(reply.header("retry-after"), Some("1"), "{}", reply.body);
                    assert!(reply.body.contains("problem:store-full"), "{}", reply.body);
                    refused += 1;
                }
                other => panic!("{key}: {other} {}", reply.body),
            }
        }
    }
    (accepted, refused)
}

/// The flood, the replays, the expiry and the second flood, on `store_args`; `rows` reads the
/// keys table's row count.
async fn bound_holds_and_sweep_reclaims<R: Future<Output = u64>>(
    store_args: &[String],
    rows: impl Fn() -> R,
) {
    let mut args = store_args.to_vec();
    args.extend(
        [
            "--max-entries",
            "100",
            "--retention",
            "1h",
            "--work-ms",
            "0",
        ]
        .map(str::to_owned),
    );
    let server = Replica::start(&args);
    let (accepted, refused) = flood(&server, "first", 3 * BOUND).await;
    assert_eq!((accepted.len() as u64, refused), (BOUND, 2 * BOUND));
    assert_eq!(rows().await, BOUND, "the table holds exactly its bound");
    for (key, first) in &accepted {
        let replay = server.pay(key, r#"{"amount":5}"#).await;
        assert!(replay.replayed(), "{key} was evicted: {}", replay.body);
        assert_eq!(&replay.body, first, "{key} replays its own payment");
    }
    assert_eq!(server.charges().await, BOUND);

    let later =
        Replica::start(&[&args[..], &["--clock-ahead".to_owned(), "2h".to_owned()]].concat());
    let (again, refused) = flood(&later, "second", BOUND).await;
    assert_eq!(
        (again.len() as u64, refused),
        (BOUND, 0),
        "the sweep reclaimed every expired row"
    );
    assert_eq!(rows().await, BOUND, "still within the bound");
    assert_eq!(later.charges().await, 2 * BOUND);
}

// SQLite: the bound, the refusals and the sweep, read from the file itself.
#[tokio::test]
async fn a_flood_stays_within_the_bound_and_the_sweep_reclaims_sqlite() {
    let db = DbFile::new("flood");
    let path = db.path().to_owned();
    bound_holds_and_sweep_reclaims(&db.args(), || {
        let path = path.clone();
        async move {
            let db = rusqlite::Connection::open(&path).expect("the store's file");
            let rows: i64 = db
                .query_row("SELECT count(*) FROM http_keys", [], |row| row.get(0))
                .expect("the keys table");
            rows.unsigned_abs()
        }
    })
    .await;
}

// PostgreSQL: the same, with the rows counted in the schema's keys table.
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
#[tokio::test]
async fn a_flood_stays_within_the_bound_and_the_sweep_reclaims_postgres() {
    let schema = PgSchema::new("flood").await;
    bound_holds_and_sweep_reclaims(&schema.args(), || schema.key_rows()).await;
}
