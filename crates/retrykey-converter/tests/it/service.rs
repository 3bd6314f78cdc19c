//! The consumer's endpoint over a real loopback connection: every bad delivery gets its problem
//! and writes nothing; a good one converts once, and its redeliveries are answered from the
//! record.

use std::sync::Arc;

use retrykey_converter::{ConverterDb, service};
use retrykey_server::loopback::{LoopbackClient, LoopbackReply, Server};
use retrykey_testkit::ScratchFile;

struct Consumer {
    db: Arc<ConverterDb>,
    server: Server,
    client: LoopbackClient,
    _file: ScratchFile,
}

impl Consumer {
    async fn start(name: &str) -> Self {
        let file = ScratchFile::new(&format!("converter-{name}"));
        let db = Arc::new(ConverterDb::open_sqlite(file.path()).expect("the database opens"));
        let server = Server::start(service::router(Arc::clone(&db)))
            .await
            .expect("the server starts");
        let client = LoopbackClient::new(server.url());
        Self {
            db,
            server,
            client,
            _file: file,
        }
    }

    async fn post(&self, headers: &[(&str, &str)], body: impl Into<String>) -> LoopbackReply {
        self.client
            .post("/conversions", headers, body.into())
            .await
            .expect("an answer")
    }

    /// Nothing converted, nothing recorded.
    fn assert_untouched(&self, what: &str) {
        assert_eq!(
            self.db.count().expect("count"),
            0,
            "conversions after {what}"
        );
        let recorded = self
            .db
            .processed(&["e1".to_owned(), "e2".to_owned()])
            .expect("records");
        assert!(recorded.is_empty(), "records after {what}: {recorded:?}");
    }

    async fn stop(self) {
        self.server.stop().await;
    }
}

fn body(event: &str, job: &str, units: &str) -> String {
    format!(r#"{{"event":"{event}","job":"{job}","units":{units}}}"#)
}

#[track_caller]
fn assert_problem(reply: &LoopbackReply, status: u16, slug: &str, what: &str) {
    assert_eq!(reply.status, status, "{what}: {reply:?}");
    assert_eq!(
        reply.header("content-type"),
        Some("application/problem+json"),
        "{what}"
    );
    assert!(
        reply
            .body
            .contains(&format!("\"type\":\"urn:retrykey:problem:{slug}\"")),
        "{what}: {}",
        reply.body
    );
}

/// One bad delivery: what it is, its headers and body, and the status and problem it gets.
type Refused<'a> = (&'a str, Vec<(&'a str, &'a str)>, String, u16, &'a str);

// A delivery without the event id as its key, with a body that is not a conversion request, or
// with a job the consumer cannot convert, gets a 4xx problem and writes nothing.
#[tokio::test]
async fn bad_deliveries_are_refused_and_change_nothing() {
    let consumer = Consumer::start("refusals").await;
    let good = body("e1", "report.docx", "3");
    let key = [("idempotency-key", "e1")];
    let long_job = "j".repeat(65);
    #[rustfmt::skip]
    let cases: Vec<Refused> = vec![
        ("no key", vec![], good.clone(), 400, "key-missing"),
        ("an empty key", vec![("idempotency-key", "")], good.clone(), 400, "key-invalid"),
        ("a malformed key", vec![("idempotency-key", "e1,e2")], good.clone(), 400, "key-invalid"),
        ("two key headers", vec![("idempotency-key", "e1"), ("idempotency-key", "e1")], good.clone(), 400, "key-invalid"),
        ("a body that is not JSON", key.to_vec(), "convert it".to_owned(), 400, "body-invalid"),
        ("a body without units", key.to_vec(), r#"{"event":"e1","job":"r"}"#.to_owned(), 400, "body-invalid"),
        ("negative units", key.to_vec(), body("e1", "r", "-3"), 400, "body-invalid"),
        ("a body of 20 KiB", key.to_vec(), "x".repeat(20 * 1024), 413, "body-too-large"),
        ("a key that is not the event", key.to_vec(), body("e2", "r", "3"), 422, "key-not-event"),
        ("an empty job", key.to_vec(), body("e1", "", "3"), 422, "job-invalid"),
        ("zero units", key.to_vec(), body("e1", "r", "0"), 422, "job-invalid"),
        ("units past a signed column", key.to_vec(), body("e1", "r", "18446744073709551615"), 422, "job-invalid"),
        ("a job of 65 bytes", key.to_vec(), body("e1", &long_job, "3"), 422, "job-invalid"),
        ("a control character in the job", key.to_vec(), body("e1", "r\\u0007", "3"), 422, "job-invalid"),
    ];
    for (what, headers, body, status, slug) in cases {
        let reply = consumer.post(&headers, body).await;
        assert_problem(&reply, status, slug, what);
        consumer.assert_untouched(what);
    }
    let missing = consumer
        .client
        .get("/elsewhere", &[])
        .await
        .expect("an answer");
    assert_problem(&missing, 404, "not-found", "an unknown path");
    consumer.stop().await;
}

// The first delivery converts (201, with its Location); every redelivery is a 200 replay with
// the same body; the count says one.
#[tokio::test]
async fn a_redelivery_replays_the_first_answer() {
    let consumer = Consumer::start("replay").await;
    let delivery = body("e1", "report.docx", "3");
    let first = consumer
        .post(&[("idempotency-key", "e1")], delivery.clone())
        .await;
    assert_eq!((first.status, first.replayed()), (201, false), "{first:?}");
    assert_eq!(first.body, r#"{"event":"e1","conversion":1}"#);
    assert_eq!(first.header("location"), Some("/conversions/1"));
    // The structured-field form of the key names the same event.
    let again = consumer
        .post(&[("idempotency-key", "\"e1\"")], delivery)
        .await;
    assert_eq!((again.status, again.replayed()), (200, true), "{again:?}");
    assert_eq!(again.body, first.body);
    let count = consumer
        .client
        .get("/conversions/count", &[])
        .await
        .expect("count");
    assert_eq!(count.body, r#"{"conversions":1}"#);
    let rows = consumer.db.list().expect("rows");
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0].event.as_str(), rows[0].job.as_str(), rows[0].units),
        ("e1", "report.docx", 3)
    );
    consumer.stop().await;
}
