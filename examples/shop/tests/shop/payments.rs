//! Payments through a provider: the real `shop` process charging through the lab's provider,
//! served here on 127.0.0.1 on a SQLite file of its own. Every test reads back what is stored:
//! the provider's charges and the keys they were made under, and the shop's payment rows.

use retrykey_foreign::provider::{CHARGES, Charge, ChargeFault, Provider};
use retrykey_http::{EntryId, IdempotencyKey, Scope};
use retrykey_replicas::{SqliteEntries, StoreOptions};

use super::*;

/// The lab's provider on a loopback socket, stopped when dropped.
struct ProviderServer {
    provider: Provider,
    url: String,
    server: tokio::task::JoinHandle<()>,
    _dir: TempDir,
}

impl ProviderServer {
    async fn start() -> Self {
        let dir = std::env::temp_dir().join(format!("shop-provider-{}", unique()));
        std::fs::create_dir_all(&dir).expect("a scratch folder");
        let store = SqliteEntries::open(dir.join("provider.sqlite"), StoreOptions::default())
            .expect("the provider's file");
        let provider = Provider::open(store).await.expect("the provider");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let url = format!(
            "http://{}{CHARGES}",
            listener.local_addr().expect("its address")
        );
        let service = axum::ServiceExt::<axum::extract::Request>::into_make_service(
            provider.clone().service(),
        );
        let server = tokio::spawn(async move {
            axum::serve(listener, service)
                .await
                .expect("the provider serves");
        });
        Self {
            provider,
            url,
            server,
            _dir: TempDir(dir),
        }
    }

    async fn charges(&self) -> Vec<Charge> {
        self.provider
            .charges()
            .await
            .expect("the provider's charges")
    }

    fn fail_next(&self, fault: ChargeFault, times: usize) {
        self.provider.faults().push(fault, times);
    }

    /// Drops the faults still queued: the provider answers again.
    fn heal(&self) {
        self.provider.faults().clear();
    }
}

impl Drop for ProviderServer {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// The key the shop charges a payment under, derived from the payment's key (an anonymous
/// caller's) as the shop derives it.
fn derived(key: &str) -> String {
    let key = IdempotencyKey::parse(key.as_bytes()).expect("a valid key");
    let operation = EntryId::new(&Scope::Anonymous, &key);
    retrykey_foreign::foreign_key(&operation, "charge")
        .as_str()
        .to_owned()
}

/// The answer of a paid payment of order `order` (2 teas: 500 cents), charged as `charge`.
fn paid(order: i64, charge: i64) -> String {
    format!(r#"{{"amount":500,"charge":{charge},"order":{order},"status":"paid"}}"#)
}

/// The shop's payments as `GET /payments` lists them: (order, point, charge).
async fn rows(shop: &Shop) -> Vec<(i64, String, Option<i64>)> {
    let reply = send(&shop.addr, "GET", "/payments", None, "")
        .await
        .expect("an answer");
    let value: serde_json::Value = serde_json::from_str(&reply.body).expect("JSON");
    let payments = value["payments"].as_array().expect("a list").iter();
    payments
        .map(|p| {
            let point = p["point"].as_str().expect("a point").to_owned();
            (
                p["order"].as_i64().expect("an order"),
                point,
                p["charge"].as_i64(),
            )
        })
        .collect()
}

impl Shop {
    fn paying(db: &Db, provider: &ProviderServer, extra: &[&str]) -> Self {
        Self::start(db, &[&["--provider", &provider.url], extra].concat())
    }

    async fn pay(&self, key: &str, order: i64) -> Reply {
        let body = format!(r#"{{"order":{order}}}"#);
        send(&self.addr, "POST", "/payments", Some(key), &body)
            .await
            .expect("an answer")
    }

    /// Places order number `n`: two teas, 500 cents.
    async fn tea(&self, n: i64) {
        let reply = self.order(&format!("tea-{n}"), TEA).await;
        assert!(reply.body.contains(&format!("\"order\":{n}")), "{reply:?}");
    }

    /// Retries `key` (at most a minute) while the key is held by an attempt that stopped (503);
    /// a charge the shop could not know fails at once.
    async fn pay_until_answered(&self, key: &str, order: i64) -> Reply {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let reply = self.pay(key, order).await;
            if reply.status != 503 {
                return reply;
            }
            assert!(!reply.body.contains("charge-unknown"), "{reply:?}");
            assert!(Instant::now() < deadline, "never answered: {reply:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// One run of the completer, a `shop --complete` process of its own: what it printed.
async fn complete(db: &Db, provider: &ProviderServer) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_shop"));
    command.args(&db.args).args(["--provider", &provider.url]);
    command.args(["--complete", "--idle-ms", "0"]);
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .expect("the completer's task")
        .expect("the completer runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    String::from_utf8(output.stdout)
        .expect("UTF-8")
        .trim()
        .to_owned()
}

/// A payment is one charge, under the key derived from the payment's; the retry replays its
/// answer and charges nothing; the order cannot be paid twice, nor a missing one at all.
async fn pays_once(db: Db) {
    let provider = ProviderServer::start().await;
    let shop = Shop::paying(&db, &provider, &[]);
    shop.tea(1).await;
    let first = shop.pay("pay-1", 1).await;
    let retry = shop.pay("pay-1", 1).await;
    assert_eq!((first.status, first.replayed()), (201, false), "{first:?}");
    assert_eq!(first.body, paid(1, 1));
    assert_eq!(
        (retry.status, &retry.body, retry.replayed()),
        (201, &first.body, true)
    );
    let again = shop.pay("pay-1-again", 1).await;
    assert_eq!(
        again.status, 409,
        "a paid order is not paid again: {again:?}"
    );
    assert_eq!(shop.pay("pay-none", 7).await.status, 404);
    let charges = provider.charges().await;
    let keys: Vec<_> = charges.iter().map(|c| (c.key.as_str(), c.amount)).collect();
    assert_eq!(keys, [(derived("pay-1").as_str(), 500)]);
    assert_eq!(rows(&shop).await, [(1, "paid".into(), Some(1))]);
}

/// A reply lost, a 5xx before the charge and a 5xx after it are absorbed by the call's own
/// retries, under the same key: each payment answers 201 at once and is one charge.
async fn transient_faults_are_absorbed(db: Db) {
    let provider = ProviderServer::start().await;
    let shop = Shop::paying(&db, &provider, &[]);
    let faults = [
        ChargeFault::ReplyLost,
        ChargeFault::ErrorBefore,
        ChargeFault::ErrorAfter,
    ];
    for (n, fault) in (1..).zip(faults) {
        shop.tea(n).await;
        provider.fail_next(fault, 1);
        let reply = shop.pay(&format!("pay-{n}"), n).await;
        assert_eq!((reply.status, reply.body), (201, paid(n, n)), "{fault:?}");
    }
    let keys: Vec<_> = (provider.charges().await.into_iter())
        .map(|c| c.key)
        .collect();
    assert_eq!(keys, [derived("pay-1"), derived("pay-2"), derived("pay-3")]);
    let points: Vec<_> = rows(&shop).await.into_iter().map(|r| r.1).collect();
    assert_eq!(points, ["paid", "paid", "paid"]);
}

/// When every attempt of the call fails, the charge is unknown: 503 with Retry-After, the
/// payment kept at `started`, and its key refused to another request meanwhile. The retry
/// asks the provider again under the same key: one charge.
async fn unknown_charge_is_asked_again(db: Db) {
    let provider = ProviderServer::start().await;
    let shop = Shop::paying(&db, &provider, &[]);
    shop.tea(1).await;
    shop.tea(2).await;
    provider.fail_next(ChargeFault::ErrorBefore, 100);
    let unknown = shop.pay("pay-down", 1).await;
    assert_eq!(unknown.status, 503, "{unknown:?}");
    assert!(unknown.body.contains("charge-unknown"), "{unknown:?}");
    let head = unknown.head.to_ascii_lowercase();
    assert!(head.contains("retry-after: 1"), "{unknown:?}");
    assert_eq!(rows(&shop).await, [(1, "started".into(), None)]);
    let other = shop.pay("pay-down", 2).await;
    assert_eq!(other.status, 503, "another body under the key: {other:?}");
    assert!(other.body.contains("key-in-use"), "{other:?}");
    provider.heal();
    assert!(provider.charges().await.is_empty());

    let retry = shop.pay("pay-down", 1).await;
    assert_eq!((retry.status, retry.body), (201, paid(1, 1)));
    let keys: Vec<_> = (provider.charges().await.into_iter())
        .map(|c| c.key)
        .collect();
    assert_eq!(keys, [derived("pay-down")]);
    assert_eq!(rows(&shop).await, [(1, "paid".into(), Some(1))]);
}

/// A declined card ends the payment: 402, kept for the key and replayed, nothing charged.
/// Another payment of the same order, under another key, may still be made.
async fn refusal_is_kept(db: Db) {
    let provider = ProviderServer::start().await;
    let shop = Shop::paying(&db, &provider, &[]);
    shop.tea(1).await;
    provider.fail_next(ChargeFault::Declined, 1);
    let declined = r#"{"amount":500,"order":1,"provider":402,"status":"declined"}"#;
    let first = shop.pay("pay-no", 1).await;
    let retry = shop.pay("pay-no", 1).await;
    assert_eq!((first.status, first.body.as_str()), (402, declined));
    assert_eq!(
        (retry.status, retry.body.as_str(), retry.replayed()),
        (402, declined, true)
    );
    assert!(provider.charges().await.is_empty(), "nothing charged");
    assert_eq!(rows(&shop).await, [(1, "declined".into(), None)]);

    let other_card = shop.pay("pay-yes", 1).await;
    assert_eq!((other_card.status, other_card.body), (201, paid(1, 1)));
    assert_eq!(provider.charges().await.len(), 1);
}

/// Killed once the provider has charged (nothing recorded yet), the shop restarted on the same
/// database resumes from `started` for the retry: it asks the provider again under the same
/// key, which answers from its record. One charge.
async fn killed_after_the_call(db: Db) {
    let provider = ProviderServer::start().await;
    let first = Shop::paying(&db, &provider, &["--pause-at", "called"]);
    first.tea(1).await;
    let addr = first.addr.clone();
    let lost = tokio::spawn(async move {
        send(
            &addr,
            "POST",
            "/payments",
            Some("pay-kill"),
            r#"{"order":1}"#,
        )
        .await
    });
    first.wait_for("paused at called");
    first.signal("KILL");
    assert!(lost.await.expect("the task").is_err(), "no answer");
    drop(first);
    assert_eq!(provider.charges().await.len(), 1, "charged before the kill");

    let second = Shop::paying(&db, &provider, &[]);
    let answer = second.pay_until_answered("pay-kill", 1).await;
    assert_eq!((answer.status, answer.body), (201, paid(1, 1)));
    let keys: Vec<_> = (provider.charges().await.into_iter())
        .map(|c| c.key)
        .collect();
    assert_eq!(keys, [derived("pay-kill")]);
    assert_eq!(rows(&second).await, [(1, "paid".into(), Some(1))]);
}

/// Killed once phase 2 recorded the charge, the shop restarted resumes from `charged`: it
/// does not ask the provider again (every call would fail now), and confirms the payment.
async fn killed_after_the_charge(db: Db) {
    let provider = ProviderServer::start().await;
    let first = Shop::paying(&db, &provider, &["--pause-at", "charged"]);
    first.tea(1).await;
    let addr = first.addr.clone();
    let lost = tokio::spawn(async move {
        send(
            &addr,
            "POST",
            "/payments",
            Some("pay-kill"),
            r#"{"order":1}"#,
        )
        .await
    });
    first.wait_for("paused at charged");
    first.signal("KILL");
    assert!(lost.await.expect("the task").is_err(), "no answer");
    drop(first);

    let second = Shop::paying(&db, &provider, &[]);
    assert_eq!(rows(&second).await, [(1, "charged".into(), Some(1))]);
    provider.fail_next(ChargeFault::ErrorBefore, 100);
    let answer = second.pay_until_answered("pay-kill", 1).await;
    assert_eq!((answer.status, answer.body), (201, paid(1, 1)));
    assert_eq!(provider.charges().await.len(), 1);
    assert_eq!(rows(&second).await, [(1, "paid".into(), Some(1))]);
}

/// A payment whose client left after a 503 is finished by the completer: while the charge is
/// unknown it releases the key; once the provider answers, it charges once under the derived
/// key, and the client's late retry replays the completer's answer.
async fn completer_finishes_what_a_client_left(db: Db) {
    let provider = ProviderServer::start().await;
    let shop = Shop::paying(&db, &provider, &[]);
    shop.tea(1).await;
    provider.fail_next(ChargeFault::ErrorBefore, 100);
    assert_eq!(shop.pay("pay-left", 1).await.status, 503);
    let unknown = "completed finished=0 unknown=1 running=0 done=0";
    assert_eq!(complete(&db, &provider).await, unknown);
    assert_eq!(rows(&shop).await, [(1, "started".into(), None)]);
    provider.heal();

    let finished = "completed finished=1 unknown=0 running=0 done=0";
    assert_eq!(complete(&db, &provider).await, finished);
    let keys: Vec<_> = (provider.charges().await.into_iter())
        .map(|c| c.key)
        .collect();
    assert_eq!(keys, [derived("pay-left")]);
    assert_eq!(rows(&shop).await, [(1, "paid".into(), Some(1))]);
    let late = shop.pay("pay-left", 1).await;
    assert_eq!((late.status, late.replayed()), (201, true), "{late:?}");
    assert_eq!(late.body, paid(1, 1), "the completer's answer");
    let nothing = "completed finished=0 unknown=0 running=0 done=0";
    assert_eq!(complete(&db, &provider).await, nothing);
    assert_eq!(provider.charges().await.len(), 1);
}

/// A payment whose attempt holds its key is left to that attempt: the completer never drives
/// it beside the attempt, and the payment is charged and paid once.
async fn completer_leaves_a_running_attempt(db: Db) {
    let provider = ProviderServer::start().await;
    let shop = Shop::paying(
        &db,
        &provider,
        &["--pause-at", "called", "--hold-ms", "1500"],
    );
    shop.tea(1).await;
    let addr = shop.addr.clone();
    let running = tokio::spawn(async move {
        send(
            &addr,
            "POST",
            "/payments",
            Some("pay-busy"),
            r#"{"order":1}"#,
        )
        .await
    });
    shop.wait_for("paused at called");
    let left = "completed finished=0 unknown=0 running=1 done=0";
    assert_eq!(complete(&db, &provider).await, left);
    let answer = running.await.expect("the task").expect("an answer");
    assert_eq!((answer.status, answer.body), (201, paid(1, 1)));
    assert_eq!(provider.charges().await.len(), 1);
    assert_eq!(rows(&shop).await, [(1, "paid".into(), Some(1))]);
}

both_stores! {
    a_payment_is_one_charge => pays_once;
    a_lost_reply_or_a_5xx_is_absorbed => transient_faults_are_absorbed;
    an_unknown_charge_is_503_and_asked_again => unknown_charge_is_asked_again;
    a_refusal_is_kept_and_replayed => refusal_is_kept;
    killed_after_the_call_charges_once => killed_after_the_call;
    killed_after_the_charge_resumes_there => killed_after_the_charge;
    the_completer_finishes_what_a_client_left => completer_finishes_what_a_client_left;
    the_completer_leaves_a_running_attempt => completer_leaves_a_running_attempt;
}
