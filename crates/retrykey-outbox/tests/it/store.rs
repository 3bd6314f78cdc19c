//! The store's one seam, as a caller without a runtime meets it: `wait` runs a call to its end,
//! and refuses, calling nothing, on a thread that runs async code, where blocking would stall
//! the runtime.

use retrykey::{Key, Request};
use retrykey_outbox::store::{OutboxStore, wait};
use retrykey_outbox::{DocumentsOptions, Error, SqliteOutbox};
use retrykey_testkit::ScratchFile;

#[test]
fn wait_runs_a_store_call_to_its_end() {
    let file = ScratchFile::new("store-wait");
    let outbox = SqliteOutbox::open(file.path(), DocumentsOptions::default()).expect("opens");
    let key = Key::new("job-1").unwrap();
    let job = Request::new("report-1.docx", 1).unwrap();
    let accepted = wait(OutboxStore::accept(&outbox, &key, &job)).expect("accepted");
    let jobs = wait(OutboxStore::jobs(&outbox)).expect("jobs");
    assert_eq!(jobs, vec![accepted.receipt.operation]);
    let events = wait(OutboxStore::events(&outbox)).expect("events");
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].event.id, accepted.event);
    assert_eq!(events[0].event.operation, accepted.receipt.operation);
    assert_eq!(events[0].event.units, 1);
}

#[test]
fn wait_inside_a_runtime_is_refused_and_calls_nothing() {
    let file = ScratchFile::new("store-wait-async");
    let outbox = SqliteOutbox::open(file.path(), DocumentsOptions::default()).expect("opens");
    let key = Key::new("job-1").unwrap();
    let job = Request::new("report-1.docx", 1).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let refused = runtime.block_on(async { wait(OutboxStore::accept(&outbox, &key, &job)) });
    assert!(matches!(refused, Err(Error::WaitInAsync)), "{refused:?}");
    assert_eq!(outbox.jobs().expect("jobs"), Vec::<u64>::new());
    assert!(outbox.events().expect("events").is_empty());
}
