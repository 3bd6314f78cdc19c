//! The provider keeps its own Idempotency-Key contract under every fault it can be asked for:
//! a caller that retries under one key charges once, whatever happened to its first attempt,
//! and a declined card is declined again, charging nothing. The caller is the stage 3 retry
//! client, as the checkout's will be; the provider runs on a real loopback socket.

use std::time::Duration;

use retrykey::Key;
use retrykey_client::adapters::HttpAdapter;
use retrykey_client::{Client, Outcome, Policy};
use retrykey_foreign::provider::{CHARGES, Charge, ChargeFault, Provider};
use retrykey_replicas::{SqliteEntries, StoreOptions};
use retrykey_server::loopback::Server;

/// A provider on its own throwaway file, served on 127.0.0.1.
async fn provider() -> (Provider, Server) {
    let store = SqliteEntries::throwaway(StoreOptions::default()).expect("a store");
    let provider = Provider::open(store).await.expect("the provider's table");
    let server = Server::start(provider.clone().service())
        .await
        .expect("a server on 127.0.0.1");
    (provider, server)
}

/// Five quick attempts, each at most `timeout`.
fn client(timeout: Duration) -> Client {
    let policy = Policy::builder()
        .max_attempts(5)
        .base(Duration::from_millis(10))
        .cap(Duration::from_millis(50))
        .budget(Duration::from_secs(30))
        .attempt_timeout(timeout)
        .build()
        .expect("a policy");
    Client::builder(policy).build()
}

/// One charge of `amount` under `key`, retried by `client`.
async fn charge(
    client: &Client,
    server: &Server,
    key: &str,
    amount: u64,
) -> Outcome<retrykey_client::adapters::HttpResponse> {
    let url = format!("{}{CHARGES}", server.url());
    let body = format!(r#"{{"amount":{amount}}}"#).into_bytes();
    let key = Key::new(key).expect("a valid key");
    HttpAdapter::new()
        .run_with_key(client, key, &url, "application/json", body)
        .await
        .expect("a request the client can send")
}

async fn charges_of(provider: &Provider, key: &str) -> Vec<Charge> {
    let all = provider.charges().await.expect("the charges read");
    all.into_iter().filter(|charge| charge.key == key).collect()
}

// With nothing in the way, one key is one charge, and the same key again is its replay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_key_is_one_charge() {
    let (provider, server) = provider().await;
    let client = client(Duration::from_secs(5));
    let first = charge(&client, &server, "fk-plain", 500).await;
    let Outcome::Succeeded {
        value,
        replayed: false,
        attempts: 1,
    } = first
    else {
        panic!("{first:?}");
    };
    assert_eq!(
        (value.status, value.body.as_ref()),
        (201, &br#"{"charge":1}"#[..])
    );
    let again = charge(&client, &server, "fk-plain", 500).await;
    assert!(
        matches!(&again, Outcome::Succeeded { replayed: true, .. }),
        "{again:?}"
    );
    assert_eq!(charges_of(&provider, "fk-plain").await.len(), 1);
    server.stop().await;
}

// Each transient fault costs the caller a retry and never a second charge: the answer lost
// after the charge, a 503 before it, a 503 after it, an answer past the attempt's deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_under_the_same_key_charges_once_whatever_failed() {
    let (provider, server) = provider().await;
    let client = client(Duration::from_millis(500));
    let faults = [
        ("fk-lost", ChargeFault::ReplyLost, true),
        ("fk-before", ChargeFault::ErrorBefore, false),
        ("fk-after", ChargeFault::ErrorAfter, true),
        ("fk-slow", ChargeFault::Slow(Duration::from_secs(2)), true),
    ];
    for (key, fault, charged_first) in faults {
        provider.faults().push(fault, 1);
        let outcome = charge(&client, &server, key, 700).await;
        let Outcome::Succeeded {
            value,
            replayed,
            attempts,
        } = outcome
        else {
            panic!("{key}: {outcome:?}");
        };
        assert_eq!(value.status, 201, "{key}");
        // The first attempt charged or not; the retry replays that charge or makes the one.
        assert_eq!(replayed, charged_first, "{key}");
        assert!(attempts >= 2, "{key}: {attempts} attempt(s)");
        let charges = charges_of(&provider, key).await;
        assert_eq!(charges.len(), 1, "{key}: {charges:?}");
        assert_eq!(charges[0].amount, 700, "{key}");
    }
    server.stop().await;
}

// A declined card is a definitive answer: the caller stops at once, nothing is charged, and
// the refusal is kept for the key, so a later retry hears it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_card_is_declined_again_and_charges_nothing() {
    let (provider, server) = provider().await;
    let client = client(Duration::from_secs(5));
    provider.faults().push(ChargeFault::Declined, 1);
    let first = charge(&client, &server, "fk-declined", 900).await;
    let Outcome::Rejected {
        failure,
        attempts: 1,
    } = first
    else {
        panic!("{first:?}");
    };
    assert_eq!(failure.status, 402);
    let again = charge(&client, &server, "fk-declined", 900).await;
    let Outcome::Rejected { failure, .. } = again else {
        panic!("{again:?}");
    };
    assert_eq!(failure.status, 402);
    assert!(charges_of(&provider, "fk-declined").await.is_empty());
    server.stop().await;
}
