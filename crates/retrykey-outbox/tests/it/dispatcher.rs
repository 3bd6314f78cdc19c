//! The dispatcher against consumers that answer "later" or "never": a `Retry-After` is waited
//! out within one delivery, a definitive refusal settles the event as rejected for an operator,
//! and settings that cannot work are refused before anything runs.

use std::sync::atomic::{AtomicUsize, Ordering};
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
use retrykey_outbox::{DocumentsOptions, Error, EventState, Marks, OutboxStore, SqliteOutbox};
use retrykey_server::loopback::Server;
use retrykey_testkit::ScratchFile;

/// A document file with one accepted job, deleted on drop.
struct Outbox {
    documents: Arc<SqliteOutbox>,
    _file: ScratchFile,
}

impl Outbox {
    fn with_one_job(name: &str) -> Self {
        Self::with_jobs(name, 1)
    }

    fn with_jobs(name: &str, jobs: u64) -> Self {
        let file = ScratchFile::new(&format!("dispatcher-{name}"));
        let documents =
            SqliteOutbox::open(file.path(), DocumentsOptions::default()).expect("opens");
        for n in 1..=jobs {
            documents
                .accept(
                    &Key::new(format!("job-{n}")).unwrap(),
                    &Request::new("report.docx", 2).unwrap(),
                )
                .expect("accepted");
        }
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
        let documents: Arc<dyn OutboxStore> = Arc::clone(&self.documents) as Arc<dyn OutboxStore>;
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

// While every slot waits on the consumer, a dispatcher whose lease covers two budgets holds
// half its concurrency more claimed, ready to start; with a shorter lease it claims only what it
// starts. Stopped, it delivers what it claimed ahead too, and leaves no claim behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_is_claimed_ahead_only_within_the_lease() {
    // The consumer holds every delivery until the test releases it: budgets of a minute, so
    // that no attempt times out and is sent again however slowly the machine gets there.
    let budget = Duration::from_secs(60);
    for (lease, ahead) in [(budget * 5, 2), (budget * 3 / 2, 0)] {
        let outbox = Outbox::with_jobs(&format!("ahead-{}", lease.as_secs()), 10);
        let arrivals = Arc::new(AtomicUsize::new(0));
        let (release, released) = tokio::sync::watch::channel(false);
        let router = {
            let arrivals = Arc::clone(&arrivals);
            Router::new().route(
                "/conversions",
                post(move |headers: HeaderMap| {
                    let arrivals = Arc::clone(&arrivals);
                    let mut released = released.clone();
                    async move {
                        arrivals.fetch_add(1, Ordering::SeqCst);
                        released
                            .wait_for(|go| *go)
                            .await
                            .expect("the test releases");
                        let key = IdempotencyKey::from_headers(&headers)
                            .unwrap()
                            .expect("a key");
                        let event = key.as_str();
                        (
                            StatusCode::CREATED,
                            format!(r#"{{"event":"{event}","conversion":41}}"#),
                        )
                    }
                }),
            )
        };
        let consumer = Server::start(router).await.expect("a consumer");
        let policy = Policy::builder()
            .budget(budget)
            .attempt_timeout(budget - Duration::from_secs(1))
            .build()
            .expect("a policy");
        let options = DispatcherOptions {
            lease,
            policy,
            concurrency: 4,
            seed: Some(2),
            ..DispatcherOptions::new(consumer.url())
        };
        let documents: Arc<dyn OutboxStore> = Arc::clone(&outbox.documents) as Arc<dyn OutboxStore>;
        let dispatcher = Dispatcher::new(documents, options).expect("valid options");
        assert_eq!(dispatcher.claims_ahead(), ahead);

        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let running = tokio::spawn(async move {
            dispatcher
                .run(async {
                    stopped.await.ok();
                })
                .await
        });
        let deadline = Instant::now() + Duration::from_secs(60);
        while arrivals.load(Ordering::SeqCst) < 4 {
            assert!(
                Instant::now() < deadline,
                "four deliveries never reached the consumer"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let claimed = |documents: &SqliteOutbox| {
            documents
                .events()
                .unwrap()
                .iter()
                .filter(|row| row.deliveries == 1)
                .count()
        };
        assert_eq!(arrivals.load(Ordering::SeqCst), 4, "one delivery per slot");
        assert_eq!(claimed(&outbox.documents), 4 + ahead, "lease {lease:?}");

        stop.send(()).expect("the dispatcher runs");
        release.send(true).expect("the consumer waits");
        let tally = running.await.expect("the run ends");
        assert_eq!(
            (tally.claimed, tally.delivered),
            (4 + ahead, 4 + ahead),
            "{tally:?}"
        );
        let events = outbox.documents.events().unwrap();
        let delivered = events
            .iter()
            .filter(|row| row.state == EventState::Delivered);
        assert_eq!(delivered.count(), 4 + ahead);
        let untouched = events
            .iter()
            .filter(|row| row.state == EventState::Pending && row.deliveries == 0);
        assert_eq!(untouched.count(), 6 - ahead, "nothing else was claimed");
        let held = events
            .iter()
            .filter(|row| row.state == EventState::Pending && row.lease_until_ms.is_some());
        assert_eq!(held.count(), 0, "no claim is left behind");
        consumer.stop().await;
    }
}

// Settings that cannot work are refused, naming the setting: a lease no longer than one
// delivery's budget, no concurrency, no poll interval.
#[test]
fn impossible_settings_are_refused() {
    let outbox = Outbox::with_one_job("settings");
    let documents: Arc<dyn OutboxStore> = Arc::clone(&outbox.documents) as Arc<dyn OutboxStore>;
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
    match SqliteOutbox::open(file.path(), options) {
        Err(Error::Config(why)) => assert!(why.contains("PostgreSQL"), "{why}"),
        other => panic!("relaxed marks on SQLite: {other:?}"),
    }
    assert!(!file.path().exists(), "the refusal created the database");
}
