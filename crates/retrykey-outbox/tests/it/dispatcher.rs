//! The dispatcher against consumers that answer "later" or "never": a `Retry-After` is waited
//! out within one delivery, a definitive refusal settles the event as rejected for an operator,
//! and settings that cannot work are refused before anything runs.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::post;
use retrykey::{Key, Request};
use retrykey_client::Policy;
use retrykey_http::IdempotencyKey;
use retrykey_outbox::dispatcher::{Dispatcher, DispatcherOptions};
use retrykey_outbox::{Documents, DocumentsOptions, Error, EventState, Marks, SqliteDocuments};
use retrykey_server::loopback::Server;
use retrykey_testkit::ScratchFile;

/// A document file with one accepted job, deleted on drop.
struct Outbox {
    documents: Arc<SqliteDocuments>,
    _file: ScratchFile,
}

impl Outbox {
    fn with_one_job(name: &str) -> Self {
        let file = ScratchFile::new(&format!("dispatcher-{name}"));
        let documents =
            SqliteDocuments::open(file.path(), DocumentsOptions::default()).expect("opens");
        documents
            .accept(
                &Key::new("job-1").unwrap(),
                &Request::new("report.docx", 2).unwrap(),
            )
            .expect("accepted");
        Self {
            documents: Arc::new(documents),
            _file: file,
        }
    }

    fn dispatcher(&self, url: &str) -> Dispatcher {
        let policy = Policy::builder()
            .max_attempts(3)
            .budget(Duration::from_secs(5))
            .base(Duration::from_millis(10))
            .cap(Duration::from_millis(20))
            .build()
            .expect("a policy");
        let options = DispatcherOptions {
            lease: Duration::from_secs(10),
            policy,
            seed: Some(1),
            ..DispatcherOptions::new(url)
        };
        let documents: Arc<dyn Documents> = Arc::clone(&self.documents) as Arc<dyn Documents>;
        Dispatcher::new(documents, options).expect("valid options")
    }
}

/// A consumer that answers each delivery with the next of `answers`, and notes when it came.
fn scripted(
    answers: Vec<(StatusCode, Option<&'static str>)>,
) -> (Router, Arc<Mutex<Vec<Instant>>>) {
    let arrivals = Arc::new(Mutex::new(Vec::new()));
    let script = Arc::new(Mutex::new(answers.into_iter()));
    let seen = Arc::clone(&arrivals);
    let router = Router::new().route(
        "/conversions",
        post(move |headers: HeaderMap, body: String| {
            let (seen, script) = (Arc::clone(&seen), Arc::clone(&script));
            async move {
                seen.lock().unwrap().push(Instant::now());
                // The key travels in the header's grammar (a UUID may come quoted): read it
                // as the layer does.
                let key = IdempotencyKey::from_headers(&headers)
                    .unwrap()
                    .expect("a key");
                let event = key.as_str().to_owned();
                assert!(body.contains(&event), "the body names the key's event");
                let (status, retry_after) = script.lock().unwrap().next().expect("an answer");
                let mut response =
                    (status, format!(r#"{{"event":"{event}","conversion":41}}"#)).into_response();
                if let Some(seconds) = retry_after {
                    response
                        .headers_mut()
                        .insert(header::RETRY_AFTER, seconds.parse().unwrap());
                }
                response
            }
        }),
    );
    (router, arrivals)
}

// A consumer that answers 503 with Retry-After: 1 is asked again after at least a second, under
// the same key, within the same delivery; its acknowledgement then settles the event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_after_is_waited_out_within_one_delivery() {
    let outbox = Outbox::with_one_job("retry-after");
    let (router, arrivals) = scripted(vec![
        (StatusCode::SERVICE_UNAVAILABLE, Some("1")),
        (StatusCode::CREATED, None),
    ]);
    let consumer = Server::start(router).await.expect("a consumer");
    let round = outbox
        .dispatcher(&consumer.url())
        .round()
        .await
        .expect("a round");
    assert_eq!((round.claimed, round.delivered), (1, 1), "{round:?}");
    let arrivals = arrivals.lock().unwrap().clone();
    assert_eq!(arrivals.len(), 2, "attempts");
    assert!(
        arrivals[1] - arrivals[0] >= Duration::from_secs(1),
        "the second attempt came {:?} after the first",
        arrivals[1] - arrivals[0]
    );
    let row = &outbox.documents.events().unwrap()[0];
    assert_eq!(
        (row.state, row.deliveries, row.conversion),
        (EventState::Delivered, 1, Some(41))
    );
    consumer.stop().await;
}

// A definitive refusal (422) settles the event as rejected, with the consumer's answer noted;
// no later round claims it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_definitive_refusal_waits_for_an_operator() {
    let outbox = Outbox::with_one_job("rejected");
    let (router, arrivals) = scripted(vec![(StatusCode::UNPROCESSABLE_ENTITY, None)]);
    let consumer = Server::start(router).await.expect("a consumer");
    let dispatcher = outbox.dispatcher(&consumer.url());
    let round = dispatcher.round().await.expect("a round");
    assert_eq!(round.rejected, 1, "{round:?}");
    let again = dispatcher.round().await.expect("a second round");
    assert_eq!(again.claimed, 0, "a rejected event is not claimed again");
    assert_eq!(arrivals.lock().unwrap().len(), 1, "deliveries");
    let row = &outbox.documents.events().unwrap()[0];
    assert_eq!((row.state, row.deliveries), (EventState::Rejected, 1));
    assert!(
        row.last_error.as_deref().is_some_and(|e| e.contains("422")),
        "{row:?}"
    );
    consumer.stop().await;
}

// Settings that cannot work are refused, naming the setting: a lease no longer than one
// delivery's budget, no concurrency, no poll interval.
#[test]
fn impossible_settings_are_refused() {
    let outbox = Outbox::with_one_job("settings");
    let documents: Arc<dyn Documents> = Arc::clone(&outbox.documents) as Arc<dyn Documents>;
    let base = DispatcherOptions::new("http://127.0.0.1:9");
    let cases = [
        (
            DispatcherOptions {
                lease: base.policy.budget(),
                ..base.clone()
            },
            "lease",
        ),
        (
            DispatcherOptions {
                concurrency: 0,
                ..base.clone()
            },
            "concurrency",
        ),
        (
            DispatcherOptions {
                poll: Duration::ZERO,
                ..base.clone()
            },
            "poll",
        ),
    ];
    for (options, setting) in cases {
        match Dispatcher::new(Arc::clone(&documents), options) {
            Err(Error::Config(why)) => assert!(why.contains(setting), "{why}"),
            other => panic!("{setting}: {other:?}"),
        }
    }
    assert_eq!(
        outbox.documents.events().unwrap()[0].deliveries,
        0,
        "nothing was claimed"
    );
}

// Marks that do not wait for the disk are a PostgreSQL setting; SQLite refuses them with a
// typed error before it creates anything.
#[test]
fn relaxed_marks_are_refused_on_sqlite() {
    let file = ScratchFile::new("relaxed-marks");
    let options = DocumentsOptions {
        marks: Marks::Relaxed,
        ..DocumentsOptions::default()
    };
    match SqliteDocuments::open(file.path(), options) {
        Err(Error::Config(why)) => assert!(why.contains("PostgreSQL"), "{why}"),
        other => panic!("relaxed marks on SQLite: {other:?}"),
    }
    assert!(!file.path().exists(), "the refusal created the database");
}
