//! What one delivery needs, shared by a dispatcher's deliveries: the outbox, the consumer's
//! address, the retry client, the redelivery schedule and the crash hooks; and the steps a
//! delivery is made of ([`Courier::send`], then one of [`Courier::mark_delivered`],
//! [`Courier::postpone`] or [`Courier::reject`]), which `deliver.rs` puts in order.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rand::SeedableRng;
use retrykey::Key;
use retrykey_client::adapters::{HttpAdapter, HttpResponse};
use retrykey_client::{Client, JitterRng, Outcome, Policy, StatusFailure, backoff};
use retrykey_wire::{CONVERSIONS_PATH, Conversion, ConversionRequest};

use crate::crash::{Hooks, Point};
use crate::store::OutboxStore;
use crate::{Claimed, Error, Event};

/// One delivery under way, as the delivery function returns it.
pub type Delivering<'a> = Pin<Box<dyn Future<Output = Result<Delivery, Error>> + Send + 'a>>;

/// What the consumer's answer to one send came to, as [`Courier::send`] returns it.
pub type Sending<'a> = Pin<Box<dyn Future<Output = Outcome<HttpResponse>> + Send + 'a>>;

/// What one delivery came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// The consumer acknowledged the event and the outbox marked it delivered.
    Delivered {
        /// The consumer's conversion number, from its answer.
        conversion: Option<u64>,
        /// Whether the consumer answered from its record (an earlier delivery converted).
        replayed: bool,
    },
    /// The delivery did not settle it: the event is due again after `wait`.
    Postponed {
        /// Why: the last attempt's failure and why the retries stopped.
        why: String,
        /// How long until it may be claimed again.
        wait: Duration,
    },
    /// The consumer refused it for good; an operator must decide.
    Rejected {
        /// The consumer's answer.
        why: String,
    },
    /// The claim was no longer the event's current one when the outbox was told: another
    /// dispatcher took it over, or an operator settled it. Nothing was written.
    Superseded,
}

/// What the consumer acknowledged: its conversion number (when its answer could be read) and
/// whether it was a replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Acknowledgement {
    /// The consumer's number for the conversion.
    pub conversion: Option<u64>,
    /// Whether the consumer answered from its record.
    pub replayed: bool,
}

/// Everything one delivery needs, shared by a dispatcher's deliveries: the outbox, the
/// consumer's address, the retry client, the redelivery schedule and the crash hooks.
#[derive(Debug)]
pub struct Courier {
    store: Arc<dyn OutboxStore>,
    url: String,
    client: Client,
    http: HttpAdapter,
    redelivery: Policy,
    rng: Mutex<JitterRng>,
    hooks: Hooks,
}

impl Courier {
    /// Everything a dispatcher delivers with: to the consumer at `consumer` (its base URL),
    /// each delivery retried by `policy`, an unsettled event due again after `redelivery`'s
    /// wait; the jitter seeded by `seed` when given.
    pub(crate) fn new(
        store: Arc<dyn OutboxStore>,
        consumer: &str,
        policy: Policy,
        redelivery: Policy,
        seed: Option<u64>,
        hooks: Hooks,
    ) -> Self {
        let mut client = Client::builder(policy);
        let rng = match seed {
            Some(seed) => {
                client = client.seed(seed);
                // A generator of its own for the redelivery waits, seeded apart from the
                // client's, so that the two sequences of waits are not the same numbers.
                JitterRng::seed_from_u64(seed.wrapping_add(1))
            }
            None => rand::make_rng(),
        };
        Self {
            store,
            url: format!("{}{CONVERSIONS_PATH}", consumer.trim_end_matches('/')),
            client: client.build(),
            http: HttpAdapter::new(),
            redelivery,
            rng: Mutex::new(rng),
            hooks,
        }
    }

    /// The outbox it settles deliveries in.
    pub(crate) fn store(&self) -> &dyn OutboxStore {
        self.store.as_ref()
    }

    /// Sends `event` to the consumer: one operation under the event's id, retried by the
    /// policy. Every attempt presents the same `Idempotency-Key`.
    pub fn send(&self, event: &Event) -> Sending<'_> {
        let key = match Key::new(event.id.as_str()) {
            Ok(key) => key,
            Err(error) => {
                let failure =
                    StatusFailure::new(400, format!("the event id is not a key: {error}"));
                return Box::pin(std::future::ready(Outcome::Rejected {
                    failure,
                    attempts: 0,
                }));
            }
        };
        let body = serde_json::to_vec(&ConversionRequest {
            event: event.id.to_string(),
            job: event.job.clone(),
            units: event.units,
        })
        .expect("a conversion request serializes");
        let (http, url) = (self.http.clone(), self.url.clone());
        Box::pin(self.client.run_with_key(key, move |attempt| {
            // Each attempt owns what it sends, so that its future borrows nothing.
            let (http, url, body) = (http.clone(), url.clone(), body.clone());
            async move { http.post(attempt, &url, "application/json", body).await }
        }))
    }

    /// What a successful answer acknowledges. A 2xx is the consumer's acknowledgement even if
    /// its body cannot be read; then the conversion number is not known.
    pub fn acknowledgement(&self, response: &HttpResponse, replayed: bool) -> Acknowledgement {
        let conversion = serde_json::from_slice::<Conversion>(&response.body)
            .ok()
            .map(|answer| answer.conversion);
        Acknowledgement {
            conversion,
            replayed,
        }
    }

    /// Marks `claimed` delivered, as acknowledged; [`Delivery::Superseded`] if the claim is no
    /// longer current.
    pub async fn mark_delivered(
        &self,
        claimed: &Claimed,
        acknowledgement: Acknowledgement,
    ) -> Result<Delivery, Error> {
        let conversion = acknowledgement.conversion;
        let marked = self.store.mark_delivered(claimed, conversion).await?;
        Ok(if marked {
            Delivery::Delivered {
                conversion,
                replayed: acknowledgement.replayed,
            }
        } else {
            Delivery::Superseded
        })
    }

    /// Lets the claim go; the event is due again after the redelivery schedule's wait.
    pub async fn postpone(&self, claimed: &Claimed, why: &str) -> Result<Delivery, Error> {
        let wait = {
            let mut rng = self.rng.lock().unwrap_or_else(PoisonError::into_inner);
            backoff::full_jitter(&self.redelivery, claimed.delivery, &mut rng)
        };
        let why = why.to_owned();
        let postponed = self.store.postpone(claimed, &why, wait).await?;
        Ok(if postponed {
            Delivery::Postponed { why, wait }
        } else {
            Delivery::Superseded
        })
    }

    /// Settles `claimed` as rejected by the consumer's `answer`: a 4xx, which the same event
    /// would get again. (A consumer URL that is wrong answers 404 to every event, and rejects
    /// them all; an operator re-drives them once the URL is fixed.)
    pub async fn reject(
        &self,
        claimed: &Claimed,
        failure: &StatusFailure,
    ) -> Result<Delivery, Error> {
        let why = failure.to_string();
        let rejected = self.store.mark_rejected(claimed, &why).await?;
        Ok(if rejected {
            Delivery::Rejected { why }
        } else {
            Delivery::Superseded
        })
    }

    /// Passes the crash point `point`.
    pub fn at(&self, point: Point) {
        self.hooks.at(point);
    }
}
