//! What an operation's phases work with: the checkout's books, the provider and how to call
//! it, the foreign call's key, and the crash hooks.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use retrykey::Key;
use retrykey_client::adapters::{HttpAdapter, HttpResponse};
use retrykey_client::{Attempt, Client, Failure, Outcome, Policy, Success};
use retrykey_http::EntryId;
use serde::Deserialize;

use crate::Books;
use crate::crash::Hooks;
use crate::provider::CHARGES;

/// How a foreign call's key is made: [`foreign_key`](crate::foreign_key), or a lab's copy.
pub type KeyFn = fn(&EntryId, &str) -> Key;

/// How the checkout calls the provider: where, and the retry policy of one call.
#[derive(Clone, Debug)]
pub struct ProviderCall {
    /// The provider's base URL (`http://127.0.0.1:PORT`).
    pub url: String,
    /// The retries of one charge call: a few attempts within a deadline shorter than the
    /// checkout's own client will wait.
    pub policy: Policy,
}

impl ProviderCall {
    /// Three attempts within two seconds, each at most one.
    pub fn to(url: impl Into<String>) -> Self {
        let policy = Policy::builder()
            .max_attempts(3)
            .base(Duration::from_millis(20))
            .cap(Duration::from_millis(200))
            .budget(Duration::from_secs(2))
            .attempt_timeout(Duration::from_secs(1))
            .build()
            .expect("a valid policy");
        Self {
            url: url.into(),
            policy,
        }
    }
}

/// What the provider said to one charge call, retries included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProviderAnswer {
    /// It charged: its charge number.
    Charged(i64),
    /// It refused for good (a declined card): its status.
    Refused(u16),
    /// No answer that settles it: the reply lost, later than the deadline, a 5xx on every try.
    Unknown,
}

/// What one attempt of a charge call comes back with, as the retry loop reads it.
pub type ProviderFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Success<HttpResponse>, Failure>> + Send + 'a>>;

/// How one attempt of a charge call reaches the provider, in place of HTTP over TCP: the
/// simulator's network, whose every delay and loss a seed decides.
pub trait ProviderTransport: Send + Sync + 'static {
    /// Posts `body` to the provider's charges under `attempt`'s key.
    fn post(&self, attempt: Attempt, body: Vec<u8>) -> ProviderFuture<'_>;
}

/// The parts of a checkout that its phases use.
pub struct CheckoutParts {
    books: Arc<dyn Books>,
    call: ProviderCall,
    client: Client,
    http: HttpAdapter,
    transport: Option<Arc<dyn ProviderTransport>>,
    pub(crate) hooks: Hooks,
    pub(crate) key: KeyFn,
}

impl fmt::Debug for CheckoutParts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckoutParts")
            .field("call", &self.call)
            .finish_non_exhaustive()
    }
}

impl CheckoutParts {
    /// The parts over `books`, charging through `call`, with no hooks and the derived key.
    pub fn new(books: Arc<dyn Books>, call: ProviderCall) -> Self {
        let client = Client::builder(call.policy).build();
        Self {
            books,
            call,
            client,
            http: HttpAdapter::new(),
            transport: None,
            hooks: Hooks::none(),
            key: crate::foreign_key,
        }
    }

    /// Sends each charge attempt through `transport` from now on, with the retries' jitter
    /// drawn from `seed`.
    pub(crate) fn set_transport(&mut self, transport: Arc<dyn ProviderTransport>, seed: u64) {
        self.client = Client::builder(self.call.policy).seed(seed).build();
        self.transport = Some(transport);
    }

    /// Where the checkout keeps its rows.
    pub fn books(&self) -> &dyn Books {
        &*self.books
    }

    /// What runs at the crash point between the provider's answer and its phase.
    pub fn hooks(&self) -> &Hooks {
        &self.hooks
    }

    /// The key of the foreign call `call` of `operation`.
    pub fn foreign_key(&self, operation: &EntryId, call: &str) -> Key {
        (self.key)(operation, call)
    }

    /// Charges `amount` through the provider under `key`, with the call's own retries.
    pub async fn charge(&self, key: Key, amount: i64) -> ProviderAnswer {
        let url = format!("{}{CHARGES}", self.call.url.trim_end_matches('/'));
        let body = format!(r#"{{"amount":{amount}}}"#).into_bytes();
        let called = match &self.transport {
            Some(transport) => {
                let post = |attempt| transport.post(attempt, body.clone());
                Ok(self.client.run_with_key(key, post).await)
            }
            None => {
                (self.http)
                    .run_with_key(&self.client, key, &url, "application/json", body)
                    .await
            }
        };
        match called {
            Ok(Outcome::Succeeded { value, .. }) => {
                match serde_json::from_slice::<Charged>(&value.body) {
                    Ok(charged) => ProviderAnswer::Charged(charged.charge),
                    Err(error) => {
                        tracing::warn!(%error, "the provider's 2xx answer does not parse");
                        ProviderAnswer::Unknown
                    }
                }
            }
            Ok(Outcome::Rejected { failure, .. }) => ProviderAnswer::Refused(failure.status),
            Ok(Outcome::Unknown { .. }) | Err(_) => ProviderAnswer::Unknown,
        }
    }
}

/// The provider's 201 body.
#[derive(Debug, Deserialize)]
struct Charged {
    charge: i64,
}
