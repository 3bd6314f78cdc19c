//! The dedup transaction on PostgreSQL: redeliveries, from one process or several at once,
//! convert once. Ignored, not passed, without a server.

use std::sync::Arc;

use retrykey_converter::ConverterDb;
use retrykey_durable_checks::admin::url;
use retrykey_testkit::FreshSchema;
use retrykey_wire::ConversionRequest;

fn request(event: &str) -> ConversionRequest {
    ConversionRequest {
        event: event.to_owned(),
        job: "report.docx".to_owned(),
        units: 3,
    }
}

// A redelivery answers the first conversion and writes nothing.
#[test]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
fn pg_redelivery_converts_once() {
    let schema = FreshSchema::new(&url());
    let db = ConverterDb::connect_postgres(&url(), schema.name()).expect("connects");
    let first = db.convert(&request("e1")).expect("converts");
    let again = db.convert(&request("e1")).expect("answers");
    assert_eq!(
        (first.conversion, first.replayed),
        (again.conversion, false)
    );
    assert!(again.replayed);
    assert_eq!(db.count().expect("count"), 1);
    let recorded = db
        .processed(&["e1".to_owned(), "e9".to_owned()])
        .expect("records");
    assert_eq!(recorded.len(), 1);
    assert_eq!(
        (recorded[0].event.as_str(), recorded[0].conversion),
        ("e1", first.conversion)
    );
}

// Sixteen deliveries of one event at once, through two consumer processes' worth of
// connections: the record's primary key lets one convert; every other waits and replays it.
#[test]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
fn pg_simultaneous_deliveries_convert_once() {
    let schema = FreshSchema::new(&url());
    let consumers = [
        Arc::new(ConverterDb::connect_postgres(&url(), schema.name()).expect("connects")),
        Arc::new(ConverterDb::connect_postgres(&url(), schema.name()).expect("connects")),
    ];
    let barrier = Arc::new(std::sync::Barrier::new(16));
    let answers: Vec<_> = (0..16)
        .map(|n| {
            let db = Arc::clone(&consumers[n % 2]);
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                db.convert(&request("e-at-once")).expect("answers")
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|thread| thread.join().expect("a delivery thread"))
        .collect();
    assert_eq!(consumers[0].count().expect("count"), 1);
    let firsts = answers.iter().filter(|answer| !answer.replayed).count();
    assert_eq!(firsts, 1, "first conversions among 16: {answers:?}");
    assert!(
        answers
            .iter()
            .all(|a| a.conversion == answers[0].conversion)
    );
}

// The service over PostgreSQL, which awaits its own connections rather than blocking a thread
// per delivery: sixteen deliveries of one event at once convert once, every other answers the
// replay, and the count endpoint reads the same database.
#[test]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
fn pg_service_converts_simultaneous_deliveries_once() {
    use retrykey_converter::service;
    use retrykey_server::loopback::{LoopbackClient, Server};

    let schema = FreshSchema::new(&url());
    let db = Arc::new(ConverterDb::connect_postgres(&url(), schema.name()).expect("connects"));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let (statuses, count) = runtime.block_on(async {
        let server = Server::start(service::router(Arc::clone(&db)))
            .await
            .expect("the server starts");
        let client = Arc::new(LoopbackClient::new(server.url()));
        let body = r#"{"event":"e-served","job":"report.docx","units":3}"#;
        let mut deliveries = tokio::task::JoinSet::new();
        for _ in 0..16 {
            let client = Arc::clone(&client);
            deliveries.spawn(async move {
                let headers = [("idempotency-key", "e-served")];
                let reply = client.post("/conversions", &headers, body).await;
                reply.expect("an answer").status
            });
        }
        let mut statuses = deliveries.join_all().await;
        statuses.sort_unstable();
        let count = client
            .get("/conversions/count", &[])
            .await
            .expect("an answer");
        server.stop().await;
        (statuses, count)
    });
    drop(runtime);
    let mut expected = vec![200; 15];
    expected.push(201);
    assert_eq!(statuses, expected);
    assert_eq!(
        (count.status, count.body.as_str()),
        (200, r#"{"conversions":1}"#)
    );
    assert_eq!(db.count().expect("count"), 1);
}
