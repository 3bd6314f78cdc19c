//! The retention sweep: a settled event is kept as long as its job's record is, so that a retry
//! of the job's key always finds the event its answer names; once the ledger's retention has
//! deleted the record, the sweep deletes the settled event too, and the key starts a new job.

use std::time::Duration;

use retrykey::{Key, Request};
use retrykey_outbox::{DocumentsOptions, EventState, SqliteOutbox};
use retrykey_testkit::ScratchFile;

fn job(n: u64) -> (Key, Request) {
    (
        Key::new(format!("job-{n}")).unwrap(),
        Request::new(format!("report-{n}.docx"), n).unwrap(),
    )
}

#[test]
fn a_settled_event_goes_with_its_job_record_not_before() {
    let file = ScratchFile::new("sweep");
    // An hour's window while the test looks inside it, so that no pause of a busy machine can
    // carry it past; the same file is opened again with a one-second window to look past it.
    let window = |retention| DocumentsOptions {
        retention,
        ..DocumentsOptions::default()
    };
    let documents =
        SqliteOutbox::open(file.path(), window(Duration::from_secs(3600))).expect("opens");
    let (key_1, job_1) = job(1);
    let (key_2, job_2) = job(2);
    let first = documents.accept(&key_1, &job_1).expect("accepted");
    documents.accept(&key_2, &job_2).expect("accepted");
    let claimed = documents
        .claim("dispatcher-a", Duration::from_secs(60), 8)
        .unwrap();
    let of = |id| claimed.iter().find(|c| c.event.id == id).expect("claimed");
    assert!(
        documents
            .mark_delivered(of(first.event.clone()), Some(1))
            .unwrap()
    );
    let second = claimed.iter().find(|c| c.event.id != first.event).unwrap();
    assert!(
        documents
            .postpone(second, "connection refused", Duration::ZERO)
            .unwrap()
    );

    // Within the retention window nothing goes, however long ago the event settled.
    assert_eq!(documents.sweep(Duration::ZERO).unwrap(), 0);
    let retry = documents.accept(&key_1, &job_1).expect("the retry");
    assert_eq!((retry.receipt.replayed, &retry.event), (true, &first.event));

    // Past it, the ledger's records go, then the settled event with its record; the pending
    // one stays until it is settled. Creation times are whole seconds: two of them have passed
    // when the sleep ends, however late.
    drop(documents);
    let documents =
        SqliteOutbox::open(file.path(), window(Duration::from_secs(1))).expect("reopens");
    std::thread::sleep(Duration::from_millis(2_100));
    assert_eq!(documents.sweep(Duration::ZERO).unwrap(), 1);
    let left: Vec<_> = documents
        .events()
        .unwrap()
        .into_iter()
        .map(|row| (row.event.operation, row.state))
        .collect();
    assert_eq!(left, vec![(2, EventState::Pending)]);
    assert!(
        documents.jobs().unwrap().is_empty(),
        "the records are swept"
    );

    // The key is new again, as after any ledger's retention: a new job, a new event.
    let again = documents.accept(&key_1, &job_1).expect("accepted anew");
    assert!(!again.receipt.replayed);
    assert_eq!(again.receipt.operation, 3);
    assert_ne!(again.event, first.event);
}
