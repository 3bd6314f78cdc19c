//! The whole path on PostgreSQL: jobs accepted by the outbox, a dispatcher delivers them to
//! this consumer whose records are in PostgreSQL too. Ignored, not passed, without a server.

use std::sync::Arc;
use std::time::Duration;

use retrykey::{Key, Request};
use retrykey_converter::{ConverterDb, service};
use retrykey_durable_checks::admin::url;
use retrykey_outbox::dispatcher::{Dispatcher, DispatcherOptions};
use retrykey_outbox::store::wait;
use retrykey_outbox::{DocumentsOptions, EventState, Marks, OutboxStore, PgOutbox};
use retrykey_server::loopback::Server;
use retrykey_testkit::FreshSchema;

fn job(n: u64) -> (Key, Request) {
    (
        Key::new(format!("job-{n}")).unwrap(),
        Request::new(format!("report-{n}.docx"), n).unwrap(),
    )
}

/// `jobs` jobs accepted on fresh PostgreSQL documents, and a consumer whose records are in a
/// fresh schema of its own; the schemas are dropped with the first value.
fn accepted_with_consumer(
    jobs: u64,
    marks: Marks,
) -> ((FreshSchema, FreshSchema), Arc<PgOutbox>, Arc<ConverterDb>) {
    let schema = FreshSchema::new(&url());
    let consumer_schema = FreshSchema::new(&url());
    let options = DocumentsOptions {
        marks,
        pg_schema: schema.name().to_owned(),
        ..DocumentsOptions::default()
    };
    let documents = Arc::new(PgOutbox::connect(&url(), options).expect("connects"));
    for n in 1..=jobs {
        let (key, request) = job(n);
        documents.accept(&key, &request).expect("accepted");
    }
    let consumer =
        Arc::new(ConverterDb::connect_postgres(&url(), consumer_schema.name()).expect("connects"));
    ((schema, consumer_schema), documents, consumer)
}

// The whole path on PostgreSQL: jobs accepted, a dispatcher delivers them to a consumer whose
// records are in PostgreSQL too; each converted once, each delivered with its number.
#[test]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
fn pg_jobs_are_converted_once() {
    converted_once(Marks::Durable);
}

// The same with marks that do not wait for the disk: the mark's own transaction, sent in one
// round trip, settles every event as the durable one does.
#[test]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
fn pg_relaxed_marks_settle_every_event() {
    converted_once(Marks::Relaxed);
}

fn converted_once(marks: Marks) {
    let (_schemas, documents, consumer) = accepted_with_consumer(5, marks);
    assert_eq!(documents.marks(), marks);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let round = runtime.block_on(async {
        let server = Server::start(service::router(Arc::clone(&consumer)))
            .await
            .unwrap();
        let options = DispatcherOptions {
            seed: Some(3),
            ..DispatcherOptions::new(server.url())
        };
        let outbox: Arc<dyn OutboxStore> = Arc::clone(&documents) as Arc<dyn OutboxStore>;
        let dispatcher = Dispatcher::new(outbox, options).expect("valid options");
        let round = dispatcher.round().await.expect("a round");
        server.stop().await;
        round
    });
    assert_eq!((round.claimed, round.delivered), (5, 5), "{round:?}");
    let conversions = consumer.list().unwrap();
    assert_eq!(conversions.len(), 5);
    for row in &wait(documents.events()).unwrap() {
        let number = conversions
            .iter()
            .find(|c| c.event == row.event.id.as_str())
            .map(|c| c.number);
        assert_eq!((row.state, row.conversion), (EventState::Delivered, number));
    }
}

// On PostgreSQL the dispatcher's calls and the consumer's dedup transaction are awaited on
// their runtime, not run on blocking threads: with the runtime's only blocking thread held for
// the whole round, the round still delivers every job.
#[test]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
fn pg_delivery_needs_no_blocking_thread() {
    let (_schemas, documents, consumer) = accepted_with_consumer(3, Marks::Durable);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (release, held) = std::sync::mpsc::channel::<()>();
    let holder = runtime.spawn_blocking(move || held.recv());
    let round = runtime.block_on(async {
        let server = Server::start(service::router(Arc::clone(&consumer)))
            .await
            .unwrap();
        let options = DispatcherOptions {
            seed: Some(5),
            ..DispatcherOptions::new(server.url())
        };
        let outbox: Arc<dyn OutboxStore> = Arc::clone(&documents) as Arc<dyn OutboxStore>;
        let dispatcher = Dispatcher::new(outbox, options).expect("valid options");
        let round = tokio::time::timeout(Duration::from_secs(30), dispatcher.round()).await;
        release.send(()).expect("the holder waits");
        holder.await.expect("the holder ends").expect("released");
        server.stop().await;
        round
    });
    let round = round
        .expect("the round ends without a blocking thread")
        .expect("a round");
    assert_eq!((round.claimed, round.delivered), (3, 3), "{round:?}");
    assert_eq!(consumer.count().unwrap(), 3);
}
