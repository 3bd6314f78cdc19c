//! The layer reports each decision as one event inside one span per keyed request, with the
//! field names `observe.rs` documents, the key never as its text, and nothing at ERROR.

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::{Request, Response, StatusCode};
use retrykey_http::observe::{DECISION, DECISIONS, ENTRY, FIELDS, SPAN};
use retrykey_http::{Body, IdempotencyLayer, body::full};
use tower::{ServiceBuilder, ServiceExt, service_fn};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// The key every story here uses: no log line may contain it.
const KEY: &str = "customer-42-card-4111";

/// One event as seen by a subscriber: its level, its fields, and its span's name and fields.
#[derive(Debug, Clone)]
struct Seen {
    level: Level,
    fields: Vec<(String, String)>,
    span: Option<(String, Vec<(String, String)>)>,
}

impl Seen {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct Fields(Vec<(String, String)>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
}

/// The events of one test, each with the fields of the span it happened in.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Seen>>>);

thread_local! {
    /// The capture of the test running on this thread (its runtime has this one thread).
    static CURRENT: std::cell::RefCell<Option<Capture>> = const { std::cell::RefCell::new(None) };
}

/// The one subscriber of the test program, routing each event to its thread's capture. A global
/// one, not a scoped one per test: tracing caches whether a callsite is wanted, and a callsite
/// first reached while another test's scoped subscriber comes or goes can be cached as unwanted.
struct Router;

impl<S: Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for Router {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(fields);
        }
    }

    fn on_record(&self, id: &Id, values: &tracing::span::Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(fields) = span.extensions_mut().get_mut::<Fields>()
        {
            values.record(fields);
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let Some(capture) = CURRENT.with(|current| current.borrow().clone()) else {
            return;
        };
        let mut fields = Fields::default();
        event.record(&mut fields);
        let span = ctx.event_span(event).map(|span| {
            let recorded = span.extensions().get::<Fields>().map(|f| f.0.clone());
            (span.name().to_owned(), recorded.unwrap_or_default())
        });
        capture.0.lock().unwrap().push(Seen {
            level: *event.metadata().level(),
            fields: fields.0,
            span,
        });
    }
}

impl Capture {
    /// A capture of what this thread's test reports from now on.
    fn start() -> Self {
        static ROUTER: std::sync::Once = std::sync::Once::new();
        ROUTER.call_once(|| {
            tracing::subscriber::set_global_default(tracing_subscriber::registry().with(Router))
                .expect("no other test of the program sets a global subscriber");
        });
        let capture = Capture::default();
        CURRENT.with(|current| *current.borrow_mut() = Some(capture.clone()));
        capture
    }

    fn decisions(&self) -> Vec<String> {
        let seen = self.0.lock().unwrap();
        seen.iter()
            .filter_map(|event| event.field(DECISION).map(str::to_owned))
            .collect()
    }

    /// Every event is a documented decision in its request's span, named by a digest.
    fn assert_well_formed(&self) {
        for event in self.0.lock().unwrap().iter() {
            let text = format!("{event:?}");
            assert!(!text.contains(KEY), "the key is logged as its text: {text}");
            assert_ne!(
                event.level,
                Level::ERROR,
                "an expected outcome at ERROR: {text}"
            );
            let decision = event.field(DECISION).expect("a decision field");
            assert!(
                DECISIONS.contains(&decision),
                "undocumented decision: {text}"
            );
            for (name, _) in &event.fields {
                assert!(
                    name == "message" || FIELDS.contains(&name.as_str()),
                    "undocumented field {name}: {text}"
                );
            }
            let (span, fields) = event.span.as_ref().expect("inside a span");
            assert_eq!(span, SPAN);
            let entry = fields.iter().find(|(n, _)| n == ENTRY).map(|(_, v)| v);
            let entry = entry.unwrap_or_else(|| panic!("the span names its entry: {text}"));
            assert!(
                entry.len() == 12 && entry.chars().all(|c| c.is_ascii_hexdigit()),
                "the entry is a 12-character digest: {entry}"
            );
        }
    }
}

/// A service behind the layer whose handler answers `statuses` in turn (then 201), slowly
/// enough (`work`) for a duplicate to find it running; and how often it ran.
fn service(
    statuses: Vec<StatusCode>,
    work: Duration,
) -> (
    impl tower::Service<Request<Body>, Response = Response<Body>, Error = Infallible, Future: Send>
    + Clone,
    Arc<AtomicUsize>,
) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let service = ServiceBuilder::new()
        .layer(IdempotencyLayer::new())
        .service(service_fn(move |_request: Request<Body>| {
            let call = counted.fetch_add(1, Ordering::SeqCst);
            let status = statuses.get(call).copied().unwrap_or(StatusCode::CREATED);
            async move {
                tokio::time::sleep(work).await;
                Ok::<_, Infallible>(
                    Response::builder()
                        .status(status)
                        .body(full("done"))
                        .unwrap(),
                )
            }
        }));
    (service, calls)
}

fn post(body: &'static str) -> Request<Body> {
    Request::post("/orders")
        .header("idempotency-key", KEY)
        .body(full(body))
        .unwrap()
}

// A lost reply, its retry and a changed body: attempt, recorded, replay, refused, in order.
#[tokio::test]
async fn a_lost_reply_story_is_four_decisions_in_order() {
    let capture = Capture::start();
    let (service, calls) = service(vec![], Duration::ZERO);
    let first = service.clone().oneshot(post("{\"n\":1}")).await.unwrap();
    let retry = service.clone().oneshot(post("{\"n\":1}")).await.unwrap();
    let changed = service.clone().oneshot(post("{\"n\":2}")).await.unwrap();
    assert_eq!(
        (first.status(), retry.status(), changed.status()),
        (
            StatusCode::CREATED,
            StatusCode::CREATED,
            StatusCode::UNPROCESSABLE_ENTITY
        )
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        capture.decisions(),
        ["attempt", "recorded", "replay", "refused"]
    );
    capture.assert_well_formed();
}

// A 5xx releases the key, and a duplicate that waited for it is told; the retry runs afresh.
#[tokio::test]
async fn a_release_and_a_wait_are_reported() {
    let capture = Capture::start();
    let (service, calls) = service(
        vec![StatusCode::SERVICE_UNAVAILABLE],
        Duration::from_millis(50),
    );
    let first = tokio::spawn(service.clone().oneshot(post("{}")));
    tokio::time::sleep(Duration::from_millis(10)).await;
    let waiting = service.clone().oneshot(post("{}")).await.unwrap();
    let first = first.await.unwrap().unwrap();
    let retry = service.clone().oneshot(post("{}")).await.unwrap();
    assert_eq!(
        (first.status(), waiting.status(), retry.status()),
        (
            StatusCode::SERVICE_UNAVAILABLE,
            StatusCode::SERVICE_UNAVAILABLE,
            StatusCode::CREATED
        )
    );
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "the retry ran the handler again"
    );
    let decisions = capture.decisions();
    assert_eq!(
        decisions,
        [
            "attempt",
            "wait",
            "released",
            "wait_ended",
            "refused",
            "attempt",
            "recorded"
        ]
    );
    let seen = capture.0.lock().unwrap().clone();
    let ended = seen
        .iter()
        .find(|e| e.field(DECISION) == Some("wait_ended"))
        .unwrap();
    assert_eq!(ended.field("outcome"), Some("released"));
    capture.assert_well_formed();
}
