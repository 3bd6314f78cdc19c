//! The payment provider as the shop calls it: one charge under a key the caller gives, with the
//! call's own retries, read into what the payment's phases need to know.

use std::time::Duration;

use retrykey_client::adapters::HttpAdapter;
use retrykey_client::{Client, Key, Outcome, Policy};
use serde::Deserialize;

/// The provider the shop's payments are charged through, and the retries of one charge.
#[derive(Debug)]
pub struct PaymentProvider {
    url: String,
    client: Client,
    http: HttpAdapter,
}

/// What the provider said to one charge call, its retries included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Charge {
    /// It charged: its charge number.
    Charged(i64),
    /// It refused for good (a 4xx): its status.
    Refused(u16),
    /// No answer that settles it: the reply lost, late, or a 5xx on every attempt.
    Unknown,
}

/// The provider's 201 body.
#[derive(Debug, Deserialize)]
struct Charged {
    charge: i64,
}

impl PaymentProvider {
    /// The provider whose charges are `POST url` `{"amount": N}` with an `Idempotency-Key`,
    /// answered 201 `{"charge": N}`. One call makes three attempts within two seconds, each at
    /// most one: a lost reply or a 5xx costs a retry, not the payment.
    pub fn at(url: impl Into<String>) -> Result<Self, retrykey_client::Error> {
        let policy = Policy::builder()
            .max_attempts(3)
            .base(Duration::from_millis(20))
            .cap(Duration::from_millis(200))
            .budget(Duration::from_secs(2))
            .attempt_timeout(Duration::from_secs(1))
            .build()?;
        Ok(Self {
            url: url.into(),
            client: Client::builder(policy).build(),
            http: HttpAdapter::new(),
        })
    }

    /// Charges `amount` under `key`: every attempt of the call, and every call of one payment,
    /// presents that key, so the provider charges once.
    pub(super) async fn charge(&self, key: Key, amount: i64) -> Charge {
        let body = format!(r#"{{"amount":{amount}}}"#).into_bytes();
        let called = (self.http)
            .run_with_key(&self.client, key, &self.url, "application/json", body)
            .await;
        match called {
            Ok(Outcome::Succeeded { value, .. }) => {
                match serde_json::from_slice::<Charged>(&value.body) {
                    Ok(charged) => Charge::Charged(charged.charge),
                    // A 2xx this code cannot read: perhaps charged. Ask again later.
                    Err(_) => Charge::Unknown,
                }
            }
            Ok(Outcome::Rejected { failure, .. }) => Charge::Refused(failure.status),
            Ok(Outcome::Unknown { .. }) | Err(_) => Charge::Unknown,
        }
    }
}
