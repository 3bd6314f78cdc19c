//! A store that fails to record a finished attempt does not change the client's answer, and the
//! failure is logged: an operator must learn that a key was left in flight.

use std::convert::Infallible;
use std::fmt::{self, Write as _};
use std::sync::{Arc, Mutex};

use http::{Request, Response};
use retrykey_http::{
    Body, Entries, EntriesFuture, EntryId, Error, Fingerprint, IdempotencyLayer, Lookup,
    MemoryEntries, Reserve, StoredResponse, Token, body::full,
};
use tower::{ServiceBuilder, ServiceExt, service_fn};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// A memory store whose `complete` always fails, as a database that went away would.
struct CannotComplete(MemoryEntries);

impl Entries for CannotComplete {
    fn lookup<'a>(&'a self, id: &'a EntryId) -> EntriesFuture<'a, Lookup> {
        self.0.lookup(id)
    }

    fn reserve<'a>(
        &'a self,
        id: &'a EntryId,
        fingerprint: &'a Fingerprint,
    ) -> EntriesFuture<'a, Reserve> {
        self.0.reserve(id, fingerprint)
    }

    fn complete<'a>(
        &'a self,
        _id: &'a EntryId,
        _token: Token,
        _response: StoredResponse,
    ) -> EntriesFuture<'a, ()> {
        EntriesFuture::ready(Err(Error::StoreUnavailable("connection lost".into())))
    }

    fn release<'a>(&'a self, id: &'a EntryId, token: Token) -> EntriesFuture<'a, ()> {
        self.0.release(id, token)
    }
}

/// Keeps the fields of every event, one line per event.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<String>>>);

struct Line(String);

impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let _ = write!(self.0, "{}={value:?} ", field.name());
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut line = Line(format!("{} ", event.metadata().level()));
        event.record(&mut line);
        self.0.lock().unwrap().push(line.0);
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[test]
fn a_failed_completion_keeps_the_answer_and_is_logged() {
    let recorder = Recorder::default();
    let status = tracing::subscriber::with_default(recorder.clone(), || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let service = ServiceBuilder::new()
                .layer(
                    IdempotencyLayer::builder()
                        .store(CannotComplete(MemoryEntries::default()))
                        .build(),
                )
                .service(service_fn(|_request: Request<Body>| async {
                    Ok::<_, Infallible>(Response::builder().status(201).body(full("")).unwrap())
                }));
            let post = Request::post("/payments")
                .header("idempotency-key", "k-1")
                .body(full("{}"))
                .unwrap();
            service.oneshot(post).await.unwrap().status()
        })
    });
    assert_eq!(status, 201, "the handler's answer reaches the client");
    // The attempt, then the failed write: a warning, never an error (the client got its
    // answer; a retry finds the key still reserved and waits for its lease, or its owner).
    let lines = recorder.0.lock().unwrap();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].starts_with("INFO ") && lines[0].contains("attempt"),
        "{lines:?}"
    );
    assert!(lines[1].starts_with("WARN "), "{lines:?}");
    assert!(
        lines[1].contains("store_unavailable")
            && lines[1].contains("could not record a finished attempt")
            && lines[1].contains("connection lost"),
        "{lines:?}"
    );
}
