//! A per-attempt timeout: an attempt that gets no answer in time is `TimedOut`, and the
//! operation retries it under the same key within its budget.

use crate::common::{self, recorder::Recorder, recorder::Reply};

use std::sync::{Arc, Mutex};
use std::time::Duration;

use retrykey_client::adapters::{HttpAdapter, HttpRequest, KEY_HEADER};
use retrykey_client::{Client, Failure, Key, Outcome, Policy, Stop};

const CREATED: &str = "HTTP/1.1 201 Created\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";

fn fast_policy(attempts: u32) -> Policy {
    Policy::builder()
        .max_attempts(attempts)
        .base(Duration::from_millis(1))
        .cap(Duration::from_millis(2))
        .build()
        .unwrap()
}

// An attempt past the request's timeout is TimedOut and is retried under the same key.
#[tokio::test]
async fn timed_out_attempt_is_retried_under_the_same_key() {
    let server = Recorder::start(vec![Reply::Hang, Reply::Answer(CREATED)]).await;
    let http = HttpAdapter::new();
    let client = Client::builder(fast_policy(3)).seed(41).build();
    let request = HttpRequest::post(server.url("/jobs"))
        .body("{}")
        .timeout(Duration::from_millis(200));
    let key = Key::new("job-41").unwrap();
    // Each attempt's own result, as the executor saw it.
    let results = Arc::new(Mutex::new(Vec::new()));
    let outcome = client
        .run_with_key(key, |attempt| {
            let (http, request, results) = (&http, &request, Arc::clone(&results));
            async move {
                let result = http.send(attempt, request).await;
                results
                    .lock()
                    .unwrap()
                    .push(result.clone().map(|s| s.value.status));
                result
            }
        })
        .await;
    let (value, replayed, attempts) = common::expect_succeeded(outcome);
    assert_eq!((value.status, replayed, attempts), (201, false, 2));
    assert_eq!(*results.lock().unwrap(), [Err(Failure::TimedOut), Ok(201)]);
    let keys: Vec<String> = server
        .received()
        .iter()
        .map(|r| r.one(KEY_HEADER).to_owned())
        .collect();
    assert_eq!(
        keys,
        ["job-41", "job-41"],
        "both attempts carry the one key"
    );
}

// When every attempt times out, the outcome is unknown and may have applied.
#[tokio::test]
async fn every_attempt_timing_out_is_unknown() {
    let server = Recorder::start(vec![Reply::Hang, Reply::Hang]).await;
    let http = HttpAdapter::new();
    let client = Client::builder(fast_policy(2)).seed(42).build();
    let request = HttpRequest::delete(server.url("/jobs/42")).timeout(Duration::from_millis(100));
    let key = Key::new("job-42").unwrap();
    let outcome = http.run_keyed(&client, key, &request).await.unwrap();
    assert_eq!(
        outcome,
        Outcome::Unknown {
            last: Failure::TimedOut,
            attempts: 2,
            stop: Stop::AttemptsExhausted,
            may_have_applied: true,
        }
    );
    let received = server.received();
    assert_eq!(received.len(), 2);
    assert!(
        received
            .iter()
            .all(|r| r.method == "DELETE" && r.one(KEY_HEADER) == "job-42")
    );
}
